import { catalogFilePieces } from './adapters/catalog-file/catalog-pieces.js';
import { runCli } from './adapters/cli/run-command.js';
import { loadDotEnv, readConfig, type Config } from './adapters/config/config.js';
import { databaseAdvice } from './adapters/mysql/database-advice.js';
import { invitationUrl, portalBaseUrl } from './adapters/portal/portal-paths.js';
import { rememberedByShape } from './adapters/structured-data/findings-by-shape.js';
import { checkStructuredData } from './adapters/structured-data/google-rules.js';
import { tracingSettings } from './adapters/config/tracing-config.js';
import { startTracing } from './adapters/tracing/start-tracing.js';
import { openOperatorCommands } from './composition/operator-commands.js';

loadDotEnv();
/** The settings the commands opened the database with; a failure before they were read is none of the database's. */
let opened: Config | undefined;
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  openCommands: () => {
    opened = readConfig(process.env);
    return openOperatorCommands(opened);
  },
  catalogPieces: catalogFilePieces,
  startTracing: async () => {
    const settings = tracingSettings(process.env);
    return settings === null ? undefined : startTracing(settings, undefined, 'partner-catalog-cli');
  },
  checkStructuredData: rememberedByShape(checkStructuredData),
  invitationUrl: (token) => {
    const { portal } = readConfig(process.env).listeners;
    return { url: invitationUrl(portalBaseUrl(portal), token), defaultAddress: portal.publicUrl === null };
  },
  explainFailure: (error) => databaseAdvice(error, opened?.storage.databaseUrl, opened?.storage.tls.enabled === true),
});
