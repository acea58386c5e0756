import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS: its callable sits on `default` under NodeNext's interop.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema> };

/** Whole numbers in plain decimal digits, at most 15 of them (always a safe integer). */
const INTEGER = /^-?[0-9]{1,15}$/;
/** Decimal numbers: digits, an optional fraction, no exponent, no hex, no spaces. */
const NUMBER = /^-?[0-9]{1,15}(\.[0-9]{1,15})?$/;
const BOOLEAN = /^(true|false)$/;
/** C0 and C1 control characters (NUL included) and DEL: never part of a valid parameter. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const INSTANT = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(Z|([+-])([0-9]{2}):([0-9]{2}))$/;
const DAY = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

function isCalendarDay(year: number, month: number, day: number): boolean {
  if (year < 1000 || month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Parses an RFC 3339 instant (`2024-05-01T12:00:00Z`, `2024-05-01T08:00:00.5-04:00`) strictly: a real
 * calendar day, hours 00-23, minutes and seconds 00-59 (no leap second, which a JavaScript date cannot
 * hold), an offset of the form `Z` or `±hh:mm`, and a UTC year from 1000 to 9999 once normalised (so the
 * normalised ISO string always compares correctly as text). Returns null for anything else.
 */
export function parseInstant(text: string): Date | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (!isCalendarDay(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const [hours, minutes] = [Number(m[10]), Number(m[11])];
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const millis = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000);
  const utcYear = at.getUTCFullYear();
  return utcYear >= 1000 && utcYear <= 9999 ? at : null;
}

/**
 * The years a day or month parameter may name: wider than any record the mirror holds (the city's sales start in
 * 2016, listings' dates later), narrow enough that every answer's own dates stay well formed (a month of year 0
 * printed as `0-01` broke its schema).
 */
export const PARAMETER_YEARS = { min: 1900, max: 2100 } as const;

/**
 * A month parameter, `YYYY-MM`, of a year in {@link PARAMETER_YEARS}: the pattern the OpenAPI document shows is
 * the one validation applies.
 */
export const MONTH_PATTERN = '^(19[0-9]{2}|20[0-9]{2}|2100)-(0[1-9]|1[0-2])$';

/** Whether `text` is a real calendar day written `YYYY-MM-DD`, of a year in {@link PARAMETER_YEARS}. */
export function isDay(text: string): boolean {
  const m = DAY.exec(text);
  const year = Number(m?.[1]);
  return !!m && year >= PARAMETER_YEARS.min && year <= PARAMETER_YEARS.max && isCalendarDay(year, Number(m[2]), Number(m[3]));
}

function newAjv(): Ajv {
  const ajv = new Ajv({ coerceTypes: false, allErrors: true, useDefaults: true, removeAdditional: false, strict: false });
  addFormats(ajv);
  // Stricter than ajv-formats: these are what the search code can turn into a normalised value.
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseInstant(s) !== null });
  ajv.addFormat('date', { type: 'string', validate: isDay });
  return ajv;
}

const problem = (name: string, keyword: string, message: string): ErrorObject =>
  ({ instancePath: `/${name}`, schemaPath: '', keyword, params: {}, message }) as ErrorObject;

/**
 * Turns the raw strings of a query string or path into the types `schema` declares, strictly:
 * integers are plain decimal digits (optional minus), numbers add an optional decimal fraction,
 * booleans are `true` or `false`; nothing else converts (no `Infinity`, exponent, hex, spaces or
 * byte-order mark). A value with a control character is refused whatever its type. Values that do not
 * convert are left as strings, so the schema then reports them; repeated parameters stay arrays.
 */
function strictConversion(schema: JsonSchema): (data: Record<string, unknown>) => ErrorObject[] {
  const types = new Map(
    Object.entries(schema.properties ?? {}).map(([name, s]) => [name, typeof s.type === 'string' ? s.type : undefined]),
  );
  const hasControl = (value: unknown) => typeof value === 'string' && CONTROL.test(value);
  // Run on every request: a plain loop over the names, and an array only for a repeated parameter.
  return (data) => {
    const errors: ErrorObject[] = [];
    for (const name in data) {
      const value = data[name];
      if (Array.isArray(value) ? value.some(hasControl) : hasControl(value)) {
        errors.push(problem(name, 'control', 'must not contain control characters'));
        continue;
      }
      if (typeof value !== 'string') continue;
      const type = types.get(name);
      if (type === 'integer' && INTEGER.test(value)) data[name] = Number(value);
      else if (type === 'number' && NUMBER.test(value)) data[name] = Number(value);
      else if (type === 'boolean' && BOOLEAN.test(value)) data[name] = value === 'true';
      else if (type === 'integer' || type === 'number')
        errors.push(problem(name, 'type', `must be a ${type === 'integer' ? 'whole' : 'decimal'} number in plain digits`));
      else if (type === 'boolean') errors.push(problem(name, 'type', 'must be true or false'));
    }
    return errors;
  };
}

/**
 * The app's schema compiler: Ajv (2020 formats, every error reported, defaults applied, no coercion),
 * with query strings and path parameters converted strictly first (see {@link strictConversion}).
 * Invalid input comes back as Ajv-shaped errors, which the error handler turns into one
 * `INVALID_PARAMS` problem naming every bad parameter.
 */
export function parameterValidatorCompiler(): FastifySchemaCompiler<JsonSchema> {
  const ajv = newAjv();
  return ({ schema, httpPart }) => {
    const validate: ValidateFunction = ajv.compile(schema);
    if (httpPart !== 'querystring' && httpPart !== 'params') return validate;
    const convert = strictConversion(schema);
    return (data: unknown) => {
      const input = (data ?? {}) as Record<string, unknown>;
      const conversionErrors = convert(input);
      const valid = validate(input);
      if (valid && conversionErrors.length === 0) return { value: input };
      // A refused conversion leaves a string behind, which the schema would report again: name it once.
      const refused = new Set(conversionErrors.map((e) => e.instancePath));
      const errors = [...conversionErrors, ...(valid ? [] : (validate.errors ?? [])).filter((e) => !refused.has(e.instancePath))];
      return errors.length ? { error: errors as unknown as Error } : { value: input };
    };
  };
}
