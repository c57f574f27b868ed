/** PostgreSQL error codes the resource operations turn into problems. */
export const pgCodes = {
  uniqueViolation: "23505",
  foreignKeyViolation: "23503",
} as const;

export const hasPgCode = (error: unknown, code: string): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;

export const pgConstraint = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null
    ? ((error as { constraint?: string }).constraint ?? undefined)
    : undefined;
