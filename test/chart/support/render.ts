import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { chartDir, renderChart, type RenderOptions } from "../../../scripts/helm-render.mjs";

/** A rendered Kubernetes object, before it is narrowed by kind. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export { chartDir };

/** The values files `helm template` runs over: none (values.yaml alone), then every ci/*.yaml. */
export const valuesMatrix: { name: string; files: string[] }[] = [
  { name: "values.yaml", files: [] },
  ...readdirSync(join(chartDir, "ci"))
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .map((file) => ({ name: `ci/${file}`, files: [join(chartDir, "ci", file)] })),
];

/** Parses multi-document YAML into objects (empty documents dropped). */
export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) throw document.errors[0];
      return document.toJS() as K8sObject | null;
    })
    .filter((object): object is K8sObject => object !== null);
}

const rendered = new Map<string, string>();

/** `helm template` of the chart, parsed (helm runs once per distinct options in a test file). */
export function renderObjects(options: RenderOptions = {}): K8sObject[] {
  const key = JSON.stringify(options);
  if (!rendered.has(key)) rendered.set(key, renderChart(options));
  return parseObjects(rendered.get(key)!);
}

/** The objects of one kind, typed as the caller's model interface. */
export function ofKind<T>(objects: K8sObject[], kind: string): (T & K8sObject)[] {
  return objects.filter((object) => object.kind === kind) as (T & K8sObject)[];
}

/** The component an object belongs to (its app.kubernetes.io/component label). */
export const componentOf = (object: K8sObject): string | undefined =>
  object.metadata.labels?.["app.kubernetes.io/component"];
