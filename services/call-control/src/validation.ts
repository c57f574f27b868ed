import type { FieldErrors } from "@switchboard/kit";

export const agentNamePattern = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export function checkName(errors: FieldErrors, pointer: string, value: string): void {
  if (value.trim() === "" || value.length > 128) {
    errors.add(pointer, "must be 1–128 characters, not only spaces");
  }
}

export function checkAgentName(errors: FieldErrors, pointer: string, value: string): void {
  if (!agentNamePattern.test(value)) {
    errors.add(pointer, "must match ^[a-z0-9][a-z0-9._-]{0,63}$");
  }
}
