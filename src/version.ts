/**
 * The package version, read from package.json: the one place it is written. `/openapi.json`, the MCP
 * server and the CLI all report this.
 */
import pkg from '../package.json';

export const VERSION: string = pkg.version;
