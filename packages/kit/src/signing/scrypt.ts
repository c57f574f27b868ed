import { scrypt, type ScryptOptions } from "node:crypto";

/** scrypt cost parameters; `ln` is log2 of the CPU/memory cost N. */
export interface ScryptParams {
  ln: number;
  r: number;
  p: number;
}

/** Promisified scrypt with enough `maxmem` for the given parameters. */
export function scryptAsync(
  secret: string | Buffer,
  salt: Buffer | string,
  params: ScryptParams,
  length = 32,
): Promise<Buffer> {
  const cost = 2 ** params.ln;
  const options: ScryptOptions = {
    N: cost,
    r: params.r,
    p: params.p,
    maxmem: 128 * cost * params.r * params.p + 16 * 1024 * 1024,
  };
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}
