/**
 * The assistant's question in Slack as Block Kit: its words, the question in plain words, and
 * Confirm / Cancel buttons whose action ids name the confirmation (a press comes to POST
 * /slack/interactions). Once answered, the message is replaced by the same words without buttons.
 */
import type { KnownBlock } from '@slack/web-api';
import { questionFor, type WaitingQuestion } from '../../agent/consent.js';

/** Slack's limit on a section's text. */
const SECTION_MAX = 3000;

const buttonPattern = /^(confirm|cancel):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The answer a button's action id gives (`confirm:<id>` yes, `cancel:<id>` no) and the confirmation it names; undefined for any other action. */
export function buttonAnswer(actionId: string): { confirmation_id: string; answer: 'yes' | 'no' } | undefined {
  const match = buttonPattern.exec(actionId);
  return match ? { confirmation_id: match[2]!.toLowerCase(), answer: match[1]!.toLowerCase() === 'confirm' ? 'yes' : 'no' } : undefined;
}

const sections = (text: string): KnownBlock[] =>
  Array.from({ length: Math.ceil(text.length / SECTION_MAX) }, (_, i) => ({ type: 'section', text: { type: 'mrkdwn', text: text.slice(i * SECTION_MAX, (i + 1) * SECTION_MAX) } }));

// Plain text: the values the person confirms are shown exactly, never as formatting or a hidden link.
const questionSection = (summary: string): KnownBlock => ({ type: 'section', text: { type: 'plain_text', text: questionFor(summary).slice(0, SECTION_MAX), emoji: false } });

/** The message asking: the reply's own words (mrkdwn, as a text reply shows them), the question, and the two buttons. */
export function questionBlocks(body: string, question: WaitingQuestion): KnownBlock[] {
  const asked = questionFor(question.summary);
  const words = (body.endsWith(asked) ? body.slice(0, -asked.length) : body).trim();
  return [
    ...sections(words),
    questionSection(question.summary),
    {
      type: 'actions',
      block_id: `confirmation:${question.confirmation_id}`,
      elements: [
        { type: 'button', action_id: `confirm:${question.confirmation_id}`, text: { type: 'plain_text', text: 'Confirm' }, style: 'primary', value: 'yes' },
        { type: 'button', action_id: `cancel:${question.confirmation_id}`, text: { type: 'plain_text', text: 'Cancel' }, value: 'no' },
      ],
    },
  ];
}

/**
 * The message once a button was pressed: its blocks without the buttons (as Slack sent them with the
 * press; an ephemeral message comes without, then the question alone), and which button it was.
 */
export function answeredBlocks(original: KnownBlock[] | undefined, summary: string, answer: 'yes' | 'no'): KnownBlock[] {
  const kept = original?.length ? original.filter((b) => b.type !== 'actions') : [questionSection(summary)];
  return [...kept, { type: 'context', elements: [{ type: 'mrkdwn', text: answer === 'yes' ? 'You pressed *Confirm*.' : 'You pressed *Cancel*.' }] }];
}
