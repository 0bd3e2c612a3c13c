/**
 * Seals and opens small secrets (an upstream's header values) with AES-256-GCM through WebCrypto,
 * keyed by the Worker secret UPSTREAM_SECRET_KEY (32 random bytes, base64 or base64url: `npm start`
 * generates one into .dev.vars; a deployment sets it with `wrangler secret put`). A sealed value is
 * `v1.<iv>.<ciphertext>` in base64url, a fresh 12-byte IV each time; the agent and upstream name are
 * the additional data, so a value copied to another upstream's row does not open. Costs one AES
 * operation (microseconds); holds no state but the imported key.
 */

/** What a secret box does; `open` throws when the value was not sealed with this key for `context`. */
export interface SecretBox {
  seal(plain: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
}

/** Why a key cannot be used, or null: it must decode to exactly 32 bytes. */
export function secretKeyWeakness(key: string | undefined): string | null {
  if (!key) return 'it is not set';
  const bytes = decodeBase64(key.trim());
  if (bytes === null) return 'it is not base64';
  return bytes.length === 32 ? null : `it decodes to ${bytes.length} bytes, not 32`;
}

/** A box keyed by `key` (base64 of 32 bytes; check it with `secretKeyWeakness` first). */
export function createSecretBox(key: string): SecretBox {
  const raw = decodeBase64(key.trim());
  if (raw === null || raw.length !== 32) throw new Error('UPSTREAM_SECRET_KEY must be 32 bytes in base64');
  const imported = crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
  const encoder = new TextEncoder();
  return {
    async seal(plain, context) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const params = { name: 'AES-GCM', iv, additionalData: encoder.encode(context) };
      const cipher = await crypto.subtle.encrypt(params, await imported, encoder.encode(plain));
      return `v1.${encodeBase64Url(iv)}.${encodeBase64Url(new Uint8Array(cipher))}`;
    },
    async open(sealed, context) {
      const [version, ivText, cipherText] = sealed.split('.');
      const iv = ivText === undefined ? null : decodeBase64(ivText);
      const cipher = cipherText === undefined ? null : decodeBase64(cipherText);
      if (version !== 'v1' || iv === null || cipher === null) throw new Error('not a sealed value');
      const params = { name: 'AES-GCM', iv, additionalData: encoder.encode(context) };
      const plain = await crypto.subtle.decrypt(params, await imported, cipher);
      return new TextDecoder().decode(plain);
    },
  };
}

function decodeBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) return null;
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  try {
    return Uint8Array.from(atob(standard.padEnd(Math.ceil(standard.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function encodeBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
