import type { BootstrapCredentials } from "./data-dir.js";

/** The start-up text of the embedded mode: URL, bootstrap credentials and a curl walkthrough. */
export function banner(url: string, creds: BootstrapCredentials, numbers: number): string {
  return `
Switchboard is running (embedded mode) at ${url}
  inventory: ${numbers.toLocaleString("en-US")} numbers

Bootstrap client (every scope, account ${creds.accountId}):
  client_id:     ${creds.clientId}
  client_secret: ${creds.clientSecret}

Try it:
  TOKEN=$(curl -s -u '${creds.clientId}:${creds.clientSecret}' -d grant_type=client_credentials \\
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
