import { catalogFilePieces } from './adapters/catalog-file/catalog-pieces.js';
import { runCli } from './adapters/cli/run-command.js';
import { loadDotEnv, readConfig } from './adapters/config/config.js';
import { databaseAdvice } from './adapters/mysql/database-advice.js';
import { invitationUrl, portalBaseUrl } from './adapters/portal/portal-paths.js';
import { checkStructuredData } from './adapters/structured-data/google-rules.js';
import { openOperatorCommands } from './composition/operator-commands.js';

loadDotEnv();
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  openCommands: () => openOperatorCommands(readConfig(process.env)),
  catalogPieces: catalogFilePieces,
  checkStructuredData,
  invitationUrl: (token) => invitationUrl(portalBaseUrl(readConfig(process.env)), token),
  explainFailure: (error) => databaseAdvice(error, process.env.DATABASE_URL),
});
