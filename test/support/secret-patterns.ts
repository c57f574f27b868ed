/**
 * What must never appear in a log line (docs/architecture.md rule 7): credentials by their shape, and
 * the fields that carry secrets or message content unless they were redacted.
 */
export const secretPatterns: { name: string; pattern: RegExp }[] = [
  { name: "access token (JWT)", pattern: /eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16,}/ },
  { name: "bearer credentials", pattern: /Bearer\s+[\w.~+/-]{16,}/ },
  { name: "basic credentials", pattern: /Basic\s+[A-Za-z0-9+/]{16,}={0,2}/ },
  { name: "service token", pattern: /sbt_[\w-]{16,}/ },
  { name: "client secret", pattern: /sbcs_[\w-]{16,}/ },
  { name: "webhook secret", pattern: /whsec_[A-Za-z0-9+/=_-]{16,}/ },
  { name: "SIP password", pattern: /sbsip_[A-Za-z0-9]{16,}/ },
  { name: "SIP digest credentials", pattern: /Digest\s[^\n]*\bresponse=\\?"?[0-9a-fA-F]{32}/ },
  {
    name: "unredacted secret or message field",
    pattern:
      /"(?:authorization|cookie|password|secret|secrets|client_secret|clientSecret|sipPassword|token|access_token|accessToken|refresh_token|private_key|privateKey|body|text|variables)":(?!"\[redacted\]")/,
  },
];

export interface SecretFinding {
  file: string;
  line: number;
  name: string;
}

/** Every finding in `text` (one log line per line), by the name of what it looks like. */
export function findSecrets(file: string, text: string): SecretFinding[] {
  const findings: SecretFinding[] = [];
  text.split("\n").forEach((content, index) => {
    for (const { name, pattern } of secretPatterns)
      if (pattern.test(content)) findings.push({ file, line: index + 1, name });
  });
  return findings;
}
