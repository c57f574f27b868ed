import { spawn } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..", "..");

/** scripts/build-image.sh, its progress on our stderr; the size it printed last, in bytes. */
export async function buildImage(image: string): Promise<{ bytes: number; seconds: number }> {
  const started = Date.now();
  const child = spawn("bash", [join(root, "scripts", "build-image.sh")], {
    cwd: root,
    env: { ...process.env, IMAGE: image },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`scripts/build-image.sh exited ${code}:\n${stderr.slice(-4000)}`);
  return {
    bytes: Number(stdout.trim().split("\n").at(-1)),
    seconds: (Date.now() - started) / 1000,
  };
}
