import type { TestPlatform } from "./platform.js";

/** Holds and assigns `count` seeded numbers with `capabilities` to the token's account. */
export async function assignNumbers(
  p: Pick<TestPlatform, "request">,
  token: string,
  options: { capabilities: string; count: number },
): Promise<string[]> {
  const search = await p.request(
    `/v1/api/numbers/search?capabilities=${options.capabilities}&limit=${options.count}`,
    { token },
  );
  const numbers: string[] = [];
  for (const { number } of ((await search.json()) as { data: { number: string }[] }).data) {
    const hold = await p.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number },
    });
    const { id } = (await hold.json()) as { id: string };
    const assigned = await p.request(`/v1/api/numbers/holds/${id}/assign`, {
      method: "POST",
      token,
    });
    if (assigned.status !== 200) throw new Error(`assigning ${number} answered ${assigned.status}`);
    numbers.push(number);
  }
  return numbers;
}
