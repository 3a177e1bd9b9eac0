// VK's own contract for the fake (DESIGN.md §9): every method call is checked against the vendored cut of VK's JSON Schema
// of its methods (./methods.json, from github.com/VKCOM/vk-api-schema at the revision named in its `x-herald-source`;
// refreshed with scripts/contracts/vk.mjs). A call names a method of the schema; `v` is the schema's API version and
// `access_token` is there (both are sent with every call, https://dev.vk.com/ru/api/api-requests); every other parameter is
// one the method declares, required ones are present, and each value has its declared type, enum and bounds as VK reads a
// form value: integers as digits, booleans as 0/1, arrays comma-separated. A call that does not fit is answered with VK's
// own error (3 unknown method, 5 no token, 8 invalid request, 100 a parameter missing or invalid) and is a bug of Herald.
import fs from 'node:fs';

interface Parameter {
  name: string;
  type?: string | string[];
  required?: boolean;
  enum?: (string | number)[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  format?: string;
  items?: Parameter;
}
interface Contract {
  'x-herald-source': { url: string; revision: string; version: string; retrieved: string };
  version: string;
  methods: Record<string, { parameters: Parameter[] }>;
  errors: Record<string, { code: number; description: string }>;
}

const contract = JSON.parse(fs.readFileSync(new URL('./methods.json', import.meta.url), 'utf8')) as Contract;
export const vkContractSource = contract['x-herald-source'];
export const vkContractMethods = Object.keys(contract.methods);

/** A refusal as VK answers it: the global error's code, and its description with what was wrong. */
export interface VkContractRefusal {
  code: number;
  message: string;
  problems: string[];
}

const errorOf = (name: string, problems: string[]): VkContractRefusal => ({ code: contract.errors[name].code, message: `${contract.errors[name].description}: ${problems.join('; ')}`, problems });

/** What is wrong with one form value for its declared parameter (undefined when it fits). */
function valueProblem(parameter: Parameter, raw: string, what: string): string | undefined {
  const types = [parameter.type ?? 'string'].flat();
  if (types.includes('array')) {
    if (!parameter.items) return undefined;
    for (const item of raw.split(',')) {
      const problem = valueProblem(parameter.items, item, `${what} item`);
      if (problem) return problem;
    }
    return undefined;
  }
  const fits = types.some((type) => {
    if (type === 'integer') return /^-?\d+$/.test(raw);
    if (type === 'number') return raw.trim() !== '' && Number.isFinite(Number(raw));
    if (type === 'boolean') return raw === '0' || raw === '1';
    return true;
  });
  if (!fits) return `${what} must be ${types.join(' or ')}${types.includes('boolean') ? ' (0 or 1)' : ''}, got ${JSON.stringify(raw)}`;
  if (parameter.enum && !parameter.enum.map(String).includes(raw)) return `${what} must be one of ${parameter.enum.join(', ')}, got ${JSON.stringify(raw)}`;
  if (parameter.minimum !== undefined && Number(raw) < parameter.minimum) return `${what} must be >= ${parameter.minimum}`;
  if (parameter.maximum !== undefined && Number(raw) > parameter.maximum) return `${what} must be <= ${parameter.maximum}`;
  if (parameter.maxLength !== undefined && raw.length > parameter.maxLength) return `${what} must be at most ${parameter.maxLength} characters`;
  // wall.getById's `posts`: "{owner_id}_{post_id}" (the schema's value_object with both required).
  if (parameter.format === 'value_object' && !/^-?\d+_\d+(_\w+)?$/.test(raw)) return `${what} must be {owner_id}_{post_id}, got ${JSON.stringify(raw)}`;
  return undefined;
}

/** What VK would refuse in a call of `method` with these form parameters; undefined when the call fits the contract. */
export function vkContractRefusal(method: string, params: URLSearchParams): VkContractRefusal | undefined {
  const declared = contract.methods[method];
  if (!declared) return errorOf('api_error_method', [`${method} is not a method of VK API ${contract.version} as Herald's contract holds it`]);
  if (!params.get('access_token')) return errorOf('api_error_auth', ['no access_token passed']);
  if (!params.get('v')) return errorOf('api_error_request', ['v (the API version) is required']);
  if (params.get('v') !== contract.version) return errorOf('api_error_request', [`v is ${params.get('v')}; the contract is of API ${contract.version}`]);
  const problems: string[] = [];
  for (const key of new Set(params.keys())) {
    if (key === 'v' || key === 'access_token') continue;
    const parameter = declared.parameters.find((item) => item.name === key);
    if (!parameter) {
      problems.push(`${key} is not a parameter of ${method}`);
      continue;
    }
    const values = params.getAll(key);
    if (values.length > 1) problems.push(`${key} is sent ${values.length} times`);
    const problem = valueProblem(parameter, values[0], key);
    if (problem) problems.push(problem);
  }
  for (const parameter of declared.parameters) if (parameter.required && !params.has(parameter.name)) problems.push(`${parameter.name} is required`);
  return problems.length > 0 ? errorOf('api_error_param', problems) : undefined;
}
