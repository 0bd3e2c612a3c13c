import { describe, expect, it } from 'vitest';
import { createSecretBox, secretKeyWeakness } from '../../src/adapters/secret-box.ts';

const KEY = btoa(String.fromCharCode(...Array.from({ length: 32 }, (_, i) => i * 7)));

describe('secret box', () => {
  it('opens what it sealed for the same context, and the sealed text does not hold the value', async () => {
    const box = createSecretBox(KEY);
    const sealed = await box.seal('Bearer sk-live-123', 'agent/up');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('sk-live');
    expect(await box.open(sealed, 'agent/up')).toBe('Bearer sk-live-123');
    expect(await box.seal('Bearer sk-live-123', 'agent/up')).not.toBe(sealed);
  });

  it('refuses a value moved to another upstream, sealed with another key, or tampered with', async () => {
    const box = createSecretBox(KEY);
    const sealed = await box.seal('secret', 'a/one');
    await expect(box.open(sealed, 'a/two')).rejects.toThrow();
    const other = createSecretBox(btoa('x'.repeat(32)));
    await expect(other.open(sealed, 'a/one')).rejects.toThrow();
    await expect(box.open(`${sealed.slice(0, -2)}AA`, 'a/one')).rejects.toThrow();
    await expect(box.open('plain', 'a/one')).rejects.toThrow('not a sealed value');
  });

  it('says why a key cannot be used', () => {
    expect(secretKeyWeakness(KEY)).toBeNull();
    expect(secretKeyWeakness(undefined)).toBe('it is not set');
    expect(secretKeyWeakness('c2hvcnQ=')).toBe('it decodes to 5 bytes, not 32');
    expect(secretKeyWeakness('not base64!')).toBe('it is not base64');
  });
});
