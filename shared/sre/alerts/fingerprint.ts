/**
 * Alertmanager's alert fingerprint (prometheus/common model.LabelSet.Fingerprint): FNV-1a 64 over the
 * label names sorted, each name and value followed by the separator byte 0xff, printed as 16 hex digits.
 * The 64-bit state is kept in four 16-bit limbs of plain numbers: BigInt arithmetic cost ~20 µs an alert.
 */
const separator = 0xff;
const encoder = new TextEncoder();
const nonAscii = /[^\x00-\x7f]/;

/** FNV-1a 64 step over one byte; `h` holds the limbs, lowest first. */
function addByte(h: number[], byte: number): void {
  const v0 = h[0]! ^ byte;
  // Multiply by the FNV prime 2^40 + 0x1b3, modulo 2^64, limb by limb with carries.
  const t0 = v0 * 0x1b3;
  let t1 = h[1]! * 0x1b3;
  let t2 = h[2]! * 0x1b3 + (v0 << 8);
  const t3 = h[3]! * 0x1b3 + (h[1]! << 8);
  t1 += t0 >>> 16;
  t2 += t1 >>> 16;
  h[0] = t0 & 0xffff;
  h[1] = t1 & 0xffff;
  h[2] = t2 & 0xffff;
  h[3] = (t3 + (t2 >>> 16)) & 0xffff;
}

/** Hashes a string's UTF-8 bytes and the separator. */
function addString(h: number[], s: string): void {
  if (nonAscii.test(s)) for (const b of encoder.encode(s)) addByte(h, b);
  else for (let i = 0; i < s.length; i++) addByte(h, s.charCodeAt(i));
  addByte(h, separator);
}

/** The fingerprint Alertmanager gives an alert with these labels. */
export function alertFingerprint(labels: Record<string, string>): string {
  const h = [0x2325, 0x8422, 0x9ce4, 0xcbf2]; // offset basis 0xcbf29ce484222325
  // Go sorts label names by byte order; JS string comparison is by UTF-16 unit, equal for label names ([a-zA-Z_][a-zA-Z0-9_]*).
  for (const name of Object.keys(labels).sort()) {
    addString(h, name);
    addString(h, labels[name]!);
  }
  return h.reverse().map((limb) => limb.toString(16).padStart(4, '0')).join('');
}
