export function satisfies(version: string, range: string): boolean;
export function engineRefusal(
  version?: string,
  packageJson?: URL | string,
  env?: NodeJS.ProcessEnv,
): string | null;
