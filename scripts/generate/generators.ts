import { generateEntityTypes } from "./entities.ts";
import { generateFormValidators } from "./form-validators.ts";
import { generateGraphqlTypes } from "./graphql.ts";
import type { Generator } from "./index.ts";
import { generateOpenapi } from "./openapi.ts";
import { screenTypes } from "./screen-types.ts";
import { generateSdlEnums } from "./sdl-enums.ts";

/** Every generator `npm run generate` runs; a new one adds its module here. */
export const generators: Generator[] = [
  screenTypes,
  generateEntityTypes,
  generateSdlEnums,
  generateGraphqlTypes,
  generateFormValidators,
  generateOpenapi,
];
