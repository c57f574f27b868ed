/** Types of scripts/helm-readme.mjs. */
export function valuesTable(): string;
export function chartReadme(current?: string): string;
export function writeChartReadme(): void;
