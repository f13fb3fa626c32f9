import type { Operator } from "../../carriers/index.ts";

/**
 * Which link each operator's messages go over now: the first link of its route (ROUTE_<OPERATOR>)
 * that is not down, so the next one takes over while one is down and traffic goes back once it
 * is up again. With every link down, the first: its messages wait for it in the queue.
 */
export class Routes {
  constructor(
    private readonly routes: Readonly<Record<Operator, readonly string[]>>,
    private readonly isDown: (link: string) => boolean,
  ) {}

  serving(operator: Operator): string | null {
    const route = this.routes[operator];
    return route.find((link) => !this.isDown(link)) ?? route[0] ?? null;
  }

  serves = (operator: Operator, link: string): boolean => this.serving(operator) === link;

  /** The operators whose route names the link. */
  operatorsOf(link: string): Operator[] {
    return (Object.keys(this.routes) as Operator[]).filter((op) => this.routes[op].includes(link));
  }
}
