/** A Dockerfile's instructions, continuation lines joined, grouped by build stage. */
export interface Instruction {
  keyword: string;
  args: string;
}

export function dockerfileStages(text: string): { name: string; instructions: Instruction[] }[] {
  const joined = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const stages: { name: string; instructions: Instruction[] }[] = [];
  for (const line of joined) {
    const [, keyword = "", args = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, " ") };
    if (instruction.keyword === "FROM") {
      const name = / AS (\S+)$/i.exec(instruction.args)?.[1] ?? String(stages.length);
      stages.push({ name, instructions: [] });
    }
    stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}
