import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { type AppConfig, persistentSecret } from "./config.ts";

/**
 * Encryption at rest for secrets the service must read back (destination passwords, tokens, keys):
 * AES-256-GCM with a key generated once and kept under the data directory (`secrets-key.secret`).
 * Text format: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

export function secretBoxFromKey(keyMaterial: string): SecretBox {
  const key = createHash("sha256").update(keyMaterial).digest();
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return ["v1", iv, cipher.getAuthTag(), body]
        .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
        .join(".");
    },
    decrypt(sealed) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("sealed secret has an unknown format");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}

const boxes = new Map<string, SecretBox>();

/** The service's secret box (one key per data directory). */
export function secretBox(config: Pick<AppConfig, "dataDir">): SecretBox {
  let box = boxes.get(config.dataDir);
  if (!box) {
    box = secretBoxFromKey(persistentSecret(config as AppConfig, "secrets-key", 32).value);
    boxes.set(config.dataDir, box);
  }
  return box;
}
