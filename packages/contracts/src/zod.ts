import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// zod 4 gives methods to each schema as it is created, so `.openapi()` (which the OpenAPI
// generator uses to name components) must be added before any contract schema exists: every
// contract module takes `z` from here.
extendZodWithOpenApi(z);

export { z };
