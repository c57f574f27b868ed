/** Types of scripts/helm-render.mjs. */
export const chartDir: string;
export const releaseName: string;
export interface RenderOptions {
  valuesFiles?: string[];
  set?: string[];
  release?: string;
}
export function renderChart(options?: RenderOptions): string;
export function splitManifests(rendered: string): { fileName: string; text: string }[];
export function writeBase(outDir: string): string[];
