import type { IncomingHttpHeaders } from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { methodNotAllowedResponse } from '../../src/adapters/http/openapi-document.js';
import { openApiDocument } from '../../src/adapters/http/operations.js';

/** What a test saw of one exchange. */
export interface ObservedExchange {
  readonly method: string;
  /** The path as sent, query string included. */
  readonly path: string;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

type Json = Record<string, unknown>;

const DOCUMENT_ID = 'openapi.json';
// The served document states the 405 in words, as no operation answers it; the check compares such answers with its declaration.
const document = {
  ...openApiDocument,
  components: { ...openApiDocument.components, responses: { ...openApiDocument.components.responses, MethodNotAllowed: methodNotAllowedResponse } },
} as unknown as Json;

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat('uri', (value: string) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && URL.canParse(value));
ajv.addFormat('date-time', (value: string) => /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$/i.test(value) && !Number.isNaN(Date.parse(value)));
ajv.addSchema(document, DOCUMENT_ID);

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** The value at a JSON pointer of the document. */
function at(pointer: string): unknown {
  return pointer.split('/').slice(1).reduce<unknown>((node, segment) => {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    return (node as Json | undefined)?.[key];
  }, document);
}

/** Follows `$ref`s inside the document; returns the final object and its pointer. */
function resolve(pointer: string): { pointer: string; node: Json } {
  const node = at(pointer) as Json | undefined;
  if (node === undefined) throw new Error(`OpenAPI document has nothing at ${pointer}`);
  const ref = node.$ref;
  return typeof ref === 'string' && ref.startsWith('#/') ? resolve(ref.slice(1)) : { pointer, node };
}

/** The compiled validator of the schema at a pointer of the document (compiled once). */
export function schemaAt(pointer: string): ValidateFunction {
  const validate = ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
  if (validate === undefined) throw new Error(`OpenAPI document has no schema at ${pointer}`);
  return validate;
}

function templatePattern(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

const PATHS = Object.entries(document.paths as Record<string, Json>).map(([template, item]) => ({
  template,
  pattern: templatePattern(template),
  aliases: (item['x-empty-parameter-paths'] as string[] | undefined) ?? [],
}));

/** The documented path template a concrete path falls under, or undefined. */
export function documentedTemplate(path: string): string | undefined {
  const pathname = path.split('?')[0] ?? '';
  return PATHS.find((p) => p.pattern.test(pathname) || p.aliases.includes(pathname))?.template;
}

/** The pointer of the response object the document promises for this exchange. */
function promisedResponse(exchange: ObservedExchange): { pointer: string; node: Json } {
  const template = documentedTemplate(exchange.path);
  if (template === undefined) return expectStatus(exchange, 404, '/components/responses/UnknownPath');
  const method = exchange.method.toLowerCase();
  const operationPointer = `/paths/${escapePointer(template)}/${method}`;
  if (at(operationPointer) === undefined) return expectStatus(exchange, 405, '/components/responses/MethodNotAllowed');
  const responsePointer = `${operationPointer}/responses/${exchange.status}`;
  if (at(responsePointer) === undefined) {
    throw new Error(`status ${exchange.status} is not documented for ${method.toUpperCase()} ${template}`);
  }
  return resolve(responsePointer);
}

function expectStatus(exchange: ObservedExchange, status: number, pointer: string) {
  if (exchange.status !== status) throw new Error(`the document promises ${status} here, the server answered ${exchange.status}`);
  return resolve(pointer);
}

/** Header values arrive as text; integers are compared as the numbers they spell. */
function headerValue(raw: string, schema: Json): unknown {
  return schema.type === 'integer' && /^-?[0-9]+$/.test(raw) ? Number(raw) : raw;
}

function checkHeaders(exchange: ObservedExchange, response: { pointer: string; node: Json }): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(response.node.headers ?? {})) {
    const declared = resolve(`${response.pointer}/headers/${escapePointer(name)}`);
    const raw = exchange.headers[name.toLowerCase()];
    if (raw === undefined) {
      if (declared.node.required === true) problems.push(`header ${name} is required but missing`);
      continue;
    }
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const validate = schemaAt(`${declared.pointer}/schema`);
    if (!validate(headerValue(value, declared.node.schema as Json))) {
      problems.push(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
    }
  }
  return problems;
}

function checkBody(exchange: ObservedExchange, response: { pointer: string; node: Json }): string[] {
  const content = response.node.content as Json | undefined;
  if (content === undefined) {
    return exchange.text === '' ? [] : [`a body was sent where none is documented: ${exchange.text.slice(0, 200)}`];
  }
  const mediaType = (exchange.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  if (!(mediaType in content)) return [`Content-Type ${JSON.stringify(mediaType)} is not one of ${Object.keys(content).join(', ')}`];
  if (mediaType !== 'application/json') return [];
  let body: unknown;
  try {
    body = JSON.parse(exchange.text);
  } catch {
    return [`the body is not JSON: ${exchange.text.slice(0, 200)}`];
  }
  const validate = schemaAt(`${response.pointer}/content/${escapePointer(mediaType)}/schema`);
  return validate(body) ? [] : [`body ${ajv.errorsText(validate.errors)}: ${exchange.text.slice(0, 300)}`];
}

/** Throws unless the exchange is one the OpenAPI document describes: status, headers and body. */
export function checkAgainstOpenApi(exchange: ObservedExchange): void {
  const where = `${exchange.method} ${exchange.path} -> ${exchange.status}`;
  let response: { pointer: string; node: Json };
  try {
    response = promisedResponse(exchange);
  } catch (error) {
    throw new Error(`OpenAPI mismatch, ${where}: ${(error as Error).message}`);
  }
  const problems = [...checkHeaders(exchange, response), ...checkBody(exchange, response)];
  if (problems.length > 0) throw new Error(`OpenAPI mismatch, ${where} (${response.pointer}):\n  ${problems.join('\n  ')}`);
}
