// node --import ./node20.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js server …
import { register } from 'node:module';

register('./node20-hooks.mjs', import.meta.url);
