/**
 * The rows a project's alert addresses keep in `alert_recipients` after a change to its list or
 * to one of its rules' lists: every address of either (a rule's list joins the same confirmation
 * flow as the project's), and which of them count as confirmed at once: team members' own
 * addresses, and those the operator (ADMIN_TOKEN) vouched for by writing them in this change.
 * Any other address waits for its confirmation link; one confirmed before stays confirmed
 * (the repo keeps a row's confirmation). An operator's change vouches only for what it wrote:
 * an address a member listed earlier and that is still unconfirmed stays unconfirmed.
 */
export function recipientRows(input: {
  projectList: readonly string[] | null;
  ruleEmails: readonly string[];
  members: readonly string[];
  vouched: readonly string[];
}): { list: string[]; confirmed: string[] } {
  const list = [...new Set([...(input.projectList ?? []), ...input.ruleEmails])];
  const members = new Set(input.members);
  const vouched = new Set(input.vouched);
  return { list, confirmed: list.filter((e) => members.has(e) || vouched.has(e)) };
}
