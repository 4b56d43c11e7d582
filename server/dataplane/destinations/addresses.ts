import type {
  AzureAttributes,
  PostgresAttributes,
  S3Attributes,
  SnowflakeAttributes,
  WebhookAttributes,
} from "./types.ts";

/** A host and port a destination's settings name, with the attribute that names it. */
export interface NamedAddress {
  attribute: string;
  host: string;
  port: number;
  /** The URL that names it, when it is one (the egress policy may allow the service's own route). */
  url?: string;
}

/** The host and port of an http(s) URL (its scheme's port when none is written), or null when it is none. */
function urlAddress(attribute: string, text: string): NamedAddress | null {
  if (!URL.canParse(text)) return null;
  const url = new URL(text);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return {
    attribute,
    host: url.hostname,
    port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
    url: text,
  };
}

/** A custom S3 endpoint as a URL: a bare host is reached over https unless useSsl is false. */
export function s3EndpointUrl(attrs: Pick<S3Attributes, "endpoint" | "useSsl">): string | undefined {
  if (!attrs.endpoint) return undefined;
  return /^https?:\/\//.test(attrs.endpoint)
    ? attrs.endpoint
    : `${attrs.useSsl === false ? "http" : "https"}://${attrs.endpoint}`;
}

/** Where a Snowflake connection goes: the account's own host unless a host is named. */
export function snowflakeAddress(attrs: Partial<Pick<SnowflakeAttributes, "account" | "host" | "port" | "protocol">>) {
  const protocol = attrs.protocol ?? "https";
  return {
    protocol,
    host: attrs.host ?? `${attrs.account}.snowflakecomputing.com`,
    port: attrs.port ?? (protocol === "https" ? 443 : 80),
  };
}

export const POSTGRES_DEFAULT_PORT = 5432;

/**
 * The hosts a destination's settings name themselves, as far as they are known without resolving
 * them (a cloud service's own host names are not listed). A stream is refused on save when the egress
 * policy refuses one of them; names are checked again, resolved, at every connection.
 */
export function namedAddresses(type: string, attrs: Record<string, unknown>): NamedAddress[] {
  const only = (address: NamedAddress | null) => (address ? [address] : []);
  switch (type) {
    case "WEBHOOK": {
      const { url } = attrs as Partial<WebhookAttributes>;
      return typeof url === "string" ? only(urlAddress("url", url)) : [];
    }
    case "POSTGRES": {
      const { host, port } = attrs as Partial<PostgresAttributes>;
      return typeof host === "string" ? [{ attribute: "host", host, port: port ?? POSTGRES_DEFAULT_PORT }] : [];
    }
    case "S3": {
      const endpoint = s3EndpointUrl(attrs as Partial<S3Attributes>);
      return endpoint ? only(urlAddress("endpoint", endpoint)) : [];
    }
    case "AZURE": {
      const { endpoint } = attrs as Partial<AzureAttributes>;
      return typeof endpoint === "string" ? only(urlAddress("endpoint", endpoint)) : [];
    }
    case "SNOWFLAKE": {
      const a = attrs as Partial<SnowflakeAttributes>;
      if (typeof a.host !== "string") return [];
      const { host, port } = snowflakeAddress({ ...a, host: a.host });
      return [{ attribute: "host", host, port }];
    }
    default:
      return [];
  }
}
