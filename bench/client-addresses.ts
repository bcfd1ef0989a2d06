/** Loopback answers on all of 127/8, so the attacker can come from an address of its own, as a per-address defence needs. */
export const LEGIT_ADDRESS = '127.0.0.1';
export const ATTACKER_ADDRESS = '127.0.0.2';
