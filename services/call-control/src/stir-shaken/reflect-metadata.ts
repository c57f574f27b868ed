/**
 * @peculiar/x509 resolves its algorithm providers with tsyringe, which refuses to load unless a
 * Reflect metadata API exists (normally the `reflect-metadata` package, not installed here).
 * This installs the three functions tsyringe calls (defineMetadata, getMetadata,
 * getOwnMetadata), backed by a WeakMap, and only when no such API is present. Import it before
 * @peculiar/x509.
 */
type MetadataMap = Map<unknown, unknown>;
type Target = object;

const store = new WeakMap<Target, Map<PropertyKey | undefined, MetadataMap>>();

function own(
  target: Target,
  property: PropertyKey | undefined,
  create: boolean,
): MetadataMap | undefined {
  let byProperty = store.get(target);
  if (!byProperty) {
    if (!create) return undefined;
    byProperty = new Map();
    store.set(target, byProperty);
  }
  let metadata = byProperty.get(property);
  if (!metadata && create) {
    metadata = new Map();
    byProperty.set(property, metadata);
  }
  return metadata;
}

const api = {
  defineMetadata(key: unknown, value: unknown, target: Target, property?: PropertyKey): void {
    own(target, property, true)!.set(key, value);
  },
  getOwnMetadata(key: unknown, target: Target, property?: PropertyKey): unknown {
    return own(target, property, false)?.get(key);
  },
  getMetadata(key: unknown, target: Target, property?: PropertyKey): unknown {
    for (let current: Target | null = target; current; current = Object.getPrototypeOf(current)) {
      const metadata = own(current, property, false);
      if (metadata?.has(key)) return metadata.get(key);
    }
    return undefined;
  },
};

const reflect = Reflect as unknown as Record<string, unknown>;
if (typeof reflect.getMetadata !== "function") {
  for (const [name, fn] of Object.entries(api)) reflect[name] = fn;
}

export {};
