import type { BootstrapCredentials } from "./data-dir.js";

export interface BannerOptions {
  /** The admin port's URL (/metrics, /livez, /readyz). */
  adminUrl: string;
}

/** The start-up text of the embedded mode: URL, bootstrap credentials and a curl walkthrough. */
export function banner(
  url: string,
  creds: BootstrapCredentials,
  numbers: number,
  options: BannerOptions,
): string {
  // The client secret is printed once, by the start that generated it; later starts point to
  // its file, and one the operator supplied (BOOTSTRAP_CLIENT_SECRET) is named, never shown.
  const secretLine = creds.generatedNow
    ? `${creds.clientSecret}  (shown this once; kept in ${creds.file})`
    : creds.fromEnvironment
      ? "(the BOOTSTRAP_CLIENT_SECRET you set; not shown)"
      : `(not shown again: see ${creds.file})`;
  const basic = creds.generatedNow
    ? `'${creds.clientId}:${creds.clientSecret}'`
    : `"${creds.clientId}:$BOOTSTRAP_CLIENT_SECRET"`;
  const setSecret =
    creds.generatedNow || creds.fromEnvironment
      ? ""
      : `  BOOTSTRAP_CLIENT_SECRET=$(node -pe 'require(${JSON.stringify(creds.file)}).clientSecret')\n`;
  return `
Switchboard is running (embedded mode) at ${url}
  inventory: ${numbers.toLocaleString("en-US")} numbers
  admin:     ${options.adminUrl} (/metrics, /livez, /readyz)

Bootstrap client (every scope, account ${creds.accountId}):
  client_id:     ${creds.clientId}
  client_secret: ${secretLine}

Try it:
${setSecret}  TOKEN=$(curl -s -u ${basic} -d grant_type=client_credentials \\
    ${url}/oauth/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
  curl -s -H "Authorization: Bearer $TOKEN" '${url}/v1/api/numbers/search?country=US&pattern=*2222&limit=3'
  NUMBER=$(curl -s -H "Authorization: Bearer $TOKEN" '${url}/v1/api/numbers/search?region=CA&limit=1' \\
    | node -pe 'JSON.parse(require("fs").readFileSync(0)).data[0].number')
  HOLD=$(curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
    -d "{\\"number\\":\\"$NUMBER\\"}" ${url}/v1/api/numbers/hold | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
  curl -s -X POST -H "Authorization: Bearer $TOKEN" ${url}/v1/api/numbers/holds/$HOLD/assign
  curl -s -H "Authorization: Bearer $TOKEN" ${url}/v1/api/numbers

OpenAPI: ${url}/v1/openapi.json    Admin: npx switchboard admin help
`;
}
