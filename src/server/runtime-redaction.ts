/**
 * What `GET /api/runtime` shows without the admin token: the tree's shape, statuses, states,
 * restart counts and mailbox depths, but no dynamic child's name. Dynamic children are the
 * conversation actors, registered as `<runtime>/conversation/session/<user>/<session>`: with
 * self-asserted user ids, their names would tell anyone who can reach the server whose
 * histories to read. Static children (the tree's own parts) keep their fixed names.
 */
export interface InspectedNode {
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly children: readonly InspectedNode[];
  readonly [field: string]: unknown;
}

export function redactTree(node: InspectedNode, root = true): InspectedNode {
  const children = node.children.map((child) => redactTree(child, false));
  if (!root && node.id === undefined) {
    const { name: _name, ...rest } = node;
    return { ...rest, children };
  }
  return { ...node, children };
}
