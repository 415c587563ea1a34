/**
 * Ed25519 keys and signatures (node:crypto). A person's private key stays with
 * them (a file on their machine); paybatch holds only public keys, in its
 * configuration. Signatures travel as base64.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

export function generateKeys(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** A public key from its PEM text, or why it is not an Ed25519 public key. */
export function publicKeyFrom(pem: string): KeyObject | string {
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType === 'ed25519' ? key : `an ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`;
  } catch {
    return 'not a PEM public key';
  }
}

export function privateKeyFrom(pem: string): KeyObject | string {
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === 'ed25519' ? key : `an ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`;
  } catch {
    return 'not a PEM private key';
  }
}

export function signBytes(privateKey: KeyObject, bytes: Buffer): string {
  return sign(null, bytes, privateKey).toString('base64');
}

export function signatureValid(publicKey: KeyObject, bytes: Buffer, signature: string): boolean {
  try {
    return verify(null, bytes, publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/**
 * A public key's fingerprint as ssh prints one: "SHA256:" and the base64 (no
 * padding) of the SHA-256 of its SPKI DER. Kept with each approval, so that a
 * key file whose contents are swapped later shows as another key.
 */
export function keyFingerprint(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
}
