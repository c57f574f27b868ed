import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findSecrets } from "./secret-patterns.js";

/**
 * Vitest global setup: every logger of the run (test workers and the processes they start)
 * writes its lines, at `debug` unless LOG_LEVEL says otherwise, to a file under
 * LOG_CAPTURE_DIR instead of nowhere. When the whole run is over, the files are scanned and the
 * run fails if any line holds a token, a secret or a message body.
 */
export default function setup(): () => void {
  const directory = mkdtempSync(join(tmpdir(), "switchboard-logs-"));
  process.env.LOG_CAPTURE_DIR = directory;
  return () => {
    const files = readdirSync(directory).filter((name) => name.endsWith(".ndjson"));
    const findings = files.flatMap((name) =>
      findSecrets(name, readFileSync(join(directory, name), "utf8")),
    );
    const lines = files.reduce(
      (total, name) => total + readFileSync(join(directory, name), "utf8").split("\n").length - 1,
      0,
    );
    if (findings.length > 0) {
      const listed = findings
        .slice(0, 20)
        .map((f) => `  ${join(directory, f.file)}:${f.line} ${f.name}`)
        .join("\n");
      throw new Error(
        `log scan: ${findings.length} line(s) of ${lines} hold a secret or a message body:\n${listed}`,
      );
    }
    process.stdout.write(`log scan: ${lines} log lines from ${files.length} processes, clean\n`);
    rmSync(directory, { recursive: true, force: true });
  };
}
