/**
 * The approved proactive templates of the messaging-app channel (spec: POST /api/chatapp/send),
 * each with its exact variables, in the order the provider's numbered placeholders use them.
 */
import { ValidationError, type FieldError } from '../../errors.js';

export interface Template {
  variables: readonly string[];
  /** The text sent when no approved Content SID is configured for the template (CHATAPP_TEMPLATE_SIDS). */
  text: string;
}

export const templates = {
  task_reminder: { variables: ['task_name', 'due_time'], text: 'Reminder: "{{task_name}}" is due {{due_time}}.' },
  daily_briefing: { variables: ['date', 'task_count', 'top_tasks'], text: 'Your briefing for {{date}}: {{task_count}} tasks. Top tasks: {{top_tasks}}' },
  calendar_reminder: { variables: ['event_name', 'time', 'location'], text: 'Coming up: {{event_name}} at {{time}}, {{location}}.' },
  task_complete_confirm: { variables: ['task_name'], text: 'Done: "{{task_name}}" is marked complete.' },
  weekly_review: { variables: ['completed_count', 'highlights'], text: 'Your week: {{completed_count}} tasks completed. Highlights: {{highlights}}' },
} as const satisfies Record<string, Template>;

export type TemplateName = keyof typeof templates;
export const templateNames = Object.keys(templates) as TemplateName[];

export interface RenderedTemplate {
  name: TemplateName;
  text: string;
  /** The variables by the provider's numbered placeholders ("1", "2", …). */
  contentVariables: Record<string, string>;
}

/**
 * Checks a template name and its variables (every variable present and non-empty, none unknown)
 * and renders it; throws one ValidationError naming each bad field.
 */
export function renderTemplate(name: string, variables: Record<string, string>): RenderedTemplate {
  const template: Template | undefined = (templates as Record<string, Template>)[name];
  if (!template) {
    throw new ValidationError(`Unknown template "${name}".`, [
      { path: 'body.template_name', message: `unknown template; one of ${templateNames.join(', ')}` },
    ]);
  }
  const errors: FieldError[] = [];
  for (const v of template.variables) {
    if (!(v in variables)) errors.push({ path: `body.variables.${v}`, message: `required by template ${name}` });
    else if (!variables[v]!.trim()) errors.push({ path: `body.variables.${v}`, message: 'must not be empty' });
  }
  for (const v of Object.keys(variables)) {
    if (!template.variables.includes(v)) errors.push({ path: `body.variables.${v}`, message: `not a variable of template ${name} (${template.variables.join(', ')})` });
  }
  if (errors.length) throw new ValidationError(`The variables do not fit template ${name}: ${errors.map((e) => e.path).join(', ')}.`, errors);
  return {
    name: name as TemplateName,
    text: template.text.replace(/\{\{(\w+)\}\}/g, (_m, v: string) => variables[v]!),
    contentVariables: Object.fromEntries(template.variables.map((v, i) => [String(i + 1), variables[v]!])),
  };
}
