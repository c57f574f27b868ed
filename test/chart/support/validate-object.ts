import {
  PrometheusRule,
  ServiceMonitor,
} from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Service, ServiceAccount } from "kubernetes-models/v1";
import type { K8sObject } from "./render.js";

interface Validatable {
  validate(): void;
}

/** The models of every kind the chart renders, by `apiVersion/kind` (offline OpenAPI schemas). */
const models: Record<string, new (data: never) => Validatable> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "apps/v1/Deployment": Deployment,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "networking.k8s.io/v1/Ingress": Ingress,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
};

/** Validates one object against its Kubernetes schema; throws naming the object and the error. */
export function validateObject(object: K8sObject): void {
  const key = `${object.apiVersion}/${object.kind}`;
  const Model = models[key];
  if (!Model) throw new Error(`no schema model for ${key} (${object.metadata?.name})`);
  try {
    new Model(object as never).validate();
  } catch (error) {
    throw new Error(`${key} ${object.metadata.name}: ${(error as Error).message}`);
  }
}
