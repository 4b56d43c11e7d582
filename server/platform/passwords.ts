import { hash, verify } from "@node-rs/argon2";

// argon2id with OWASP's recommended minimum (19 MiB, 2 passes).
const options = { algorithm: 2 as const, memoryCost: 19456, timeCost: 2, parallelism: 1 };

export const hashPassword = (password: string) => hash(password, options);

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  // Without a stored hash still spend the time of one verification, so timing tells nothing.
  if (!passwordHash) {
    await hash(password, options);
    return false;
  }
  return verify(passwordHash, password);
}
