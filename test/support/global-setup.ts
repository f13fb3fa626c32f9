// Placeholder until the database harness lands; replaced in the intake work.
export default async function setup(): Promise<void> {}
