/**
 * Alertmanager's alert fingerprint (prometheus/common model.LabelSet.Fingerprint): FNV-1a 64 over the
 * label names sorted, each name and value followed by the separator byte 0xff, printed as 16 hex digits.
 */
const offset64 = 0xcbf29ce484222325n;
const prime64 = 0x100000001b3n;
const mask64 = 0xffffffffffffffffn;
const separator = 0xff;

function addBytes(hash: bigint, bytes: Uint8Array): bigint {
  let h = hash;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * prime64) & mask64;
  }
  return h;
}

const encoder = new TextEncoder();
const sep = Uint8Array.of(separator);

/** The fingerprint Alertmanager gives an alert with these labels. */
export function alertFingerprint(labels: Record<string, string>): string {
  let h = offset64;
  // Go sorts label names by byte order; JS string comparison is by UTF-16 unit, equal for label names ([a-zA-Z_][a-zA-Z0-9_]*).
  for (const name of Object.keys(labels).sort()) {
    h = addBytes(h, encoder.encode(name));
    h = addBytes(h, sep);
    h = addBytes(h, encoder.encode(labels[name]!));
    h = addBytes(h, sep);
  }
  return h.toString(16).padStart(16, '0');
}
