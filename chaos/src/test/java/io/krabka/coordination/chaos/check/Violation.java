package io.krabka.coordination.chaos.check;

/**
 * One breach of a property the product promises, with the evidence. The term rules hold
 * within a role: roles share coordination partitions, so terms of two roles are offsets
 * that say nothing about each other.
 */
public record Violation(Kind kind, String evidence) {

    public enum Kind {
        /**
         * A command the broker appended (its log-append time) after a later term's holder of
         * the same role had fenced every earlier producer of it: committed by a deposed leader.
         */
        STALE_DISPATCH,
        /**
         * In an output partition's log order, a command of a lower term after one of a
         * higher term of the same role (which also orders every grant's first write before
         * any later grant's of the role).
         */
        TERM_BACKWARDS,
        /**
         * A command of a main-role term granted before a challenger's InitProducerId, in the
         * log after the transaction that challenger committed: a producer it fenced still committed.
         */
        FENCED_BY_CHALLENGER_YET_COMMITTED,
        /** Commands of two members under one term of one role. */
        SHARED_TERM,
        /** A command under a term its role's lease records do not grant to its member. */
        UNGRANTED_TERM,
        /** A member saw a commit acknowledged, but the command (of that role) is not in the log. */
        ACKED_BUT_MISSING,
        /** The device received a command that is not in the log (dispatched before it was durable). */
        DISPATCHED_BUT_NOT_COMMITTED,
        /** A role had no holder for longer than the bound, not counting the harness's outages. */
        LEADERLESS_GAP,
        /** Garbage was appended to the coordination topic but no member counted it. */
        MALFORMED_NOT_COUNTED,
        /** A restarted member kept a rank ahead of members registered before it restarted. */
        RESTART_NOT_AT_TAIL,
        /**
         * An acknowledged request has no command in the log although the pipeline's group
         * committed the input offsets past it (or it is not in the input topic at all).
         */
        REQUEST_LOST,
        /** Acknowledged requests with no command, never passed by the group's committed offsets: the pipeline did not drain. */
        REQUEST_NOT_PROCESSED,
        /** A request with more than one command in the log. */
        REQUEST_DUPLICATED,
        /** A command carrying the id of a request the producer never sent. */
        REQUEST_UNKNOWN,
        /**
         * {@code describe()} called a member current that did not hold the role: no
         * leadership of it has that term, or a later term's holder had fenced it before
         * the call began.
         */
        CURRENT_FOR_NON_HOLDER
    }

    @Override
    public String toString() {
        return kind + ": " + evidence;
    }
}
