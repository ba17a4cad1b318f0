import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ConversationReply, ConversationView, SendMessageInput } from './conversation-types';

/**
 * Update: one message of the user. Queued behind the messages before it; returns the message once answered (or
 * failed). Its update id is the message id: Temporal accepts it once per run, the conversation once across
 * continue-as-new (a message id it has seen gets the first answer).
 */
export const sendMessageUpdate = defineUpdate<ConversationReply, [SendMessageInput]>('sendMessage');

/**
 * Update: close the conversation. Messages already queued are answered first; later ones are refused. Returns
 * the conversation as it stands.
 */
export const closeConversationUpdate = defineUpdate<ConversationView, []>('closeConversation');

/** Query: the conversation: status and every message with its answer, oldest first. */
export const getConversationQuery = defineQuery<ConversationView>('getConversation');
