import smpp from "smpp";

/** Placeholder: the helper building the SMSC replaces this. */
export async function startTestSmsc(): Promise<{ server: smpp.Server }> {
  return { server: smpp.createServer(() => undefined) };
}
