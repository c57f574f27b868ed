/**
 * Opt-out and opt-in keywords (CTIA and carrier practice, as Twilio and Telnyx handle them): the
 * whole message, trimmed, case-insensitive, is the keyword. STOP, STOPALL, UNSUBSCRIBE, CANCEL,
 * END and QUIT opt out; START and UNSTOP opt back in; HELP (and INFO) ask for help.
 */
export type KeywordAction = "opt-out" | "opt-in" | "help";

const actions: Record<string, KeywordAction> = {
  stop: "opt-out",
  stopall: "opt-out",
  unsubscribe: "opt-out",
  cancel: "opt-out",
  end: "opt-out",
  quit: "opt-out",
  start: "opt-in",
  unstop: "opt-in",
  help: "help",
  info: "help",
};

export interface Keyword {
  /** The keyword as recognised, lower case (`stop`, `unstop`, `help`…). */
  keyword: string;
  action: KeywordAction;
}

export function recognizeKeyword(body: string): Keyword | undefined {
  const word = body
    .trim()
    .replace(/[.!]+$/, "")
    .toLowerCase();
  const action = actions[word];
  return action ? { keyword: word, action } : undefined;
}
