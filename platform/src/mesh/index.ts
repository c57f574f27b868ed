export type { ChildExit, MeshChild } from "./supervised-child.js";
export {
  meshComponents,
  meshGateway,
  meshServices,
  type MeshComponentName,
} from "./mesh-components.js";
export { defaultMeshPorts, freeMeshPorts, type MeshPorts } from "./mesh-ports.js";
export { loadMeshOptions } from "./mesh-config.js";
export { startMesh, type MeshOptions, type RunningMesh } from "./start-mesh.js";
