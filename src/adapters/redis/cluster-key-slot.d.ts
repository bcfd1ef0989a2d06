// The package ships JavaScript only (ioredis uses it too); this is the part of its API the service calls.
declare module 'cluster-key-slot' {
  /** The Cluster slot (0 to 16383) of a key, its hash tag's when it has one. */
  export default function calculateSlot(key: string): number;
}
