/** `to` (a longer array of the same kind) holding `from`'s values at its start: a typed array grown. */
export function grown<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
