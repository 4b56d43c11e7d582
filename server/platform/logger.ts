import pino, { type DestinationStream } from "pino";

/** The service's logger; secrets are redacted wherever they could appear in a logged object. */
export function createLogger(level: string, destination?: DestinationStream) {
  return pino(
    {
      level,
      redact: {
        paths: [
          "password",
          "*.password",
          "*.currentPassword",
          "*.passwordConfirmation",
          "req.headers.cookie",
          "req.headers.authorization",
          "req.headers['x-token']",
          "*.token",
          "*.secretKey",
          "*.sasToken",
          "*.securityToken",
        ],
        censor: "[redacted]",
      },
    },
    destination,
  );
}
