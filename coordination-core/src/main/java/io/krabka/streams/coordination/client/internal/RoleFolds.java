package io.krabka.streams.coordination.client.internal;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.record.CoordinationCodec;
import io.krabka.streams.coordination.record.CoordinationKey;
import io.krabka.streams.coordination.record.CoordinationRecord;
import io.krabka.streams.coordination.record.MalformedRecordException;
import io.krabka.streams.coordination.record.RolePartitioner;
import io.krabka.streams.coordination.succession.RoleState;
import io.krabka.streams.coordination.succession.RoleStateBuilder;
import io.krabka.streams.coordination.transport.CoordinationTransport;
import io.krabka.streams.coordination.transport.RawRecord;
import io.krabka.streams.coordination.transport.RoleNews;
import io.krabka.streams.coordination.transport.RoleRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's incremental folds of the roles it reads: each read folds only what was
 * committed since the last one. Malformed records are skipped with a warning and
 * counted; they never change a roster or a lease.
 */
public final class RoleFolds {

    // The client's logger: operators filter and tests count its lines by that name.
    private static final Logger log = LoggerFactory.getLogger(Engine.LOGGER);

    private final CoordinationTransport transport;
    private final Map<Role, RoleStateBuilder> views = new ConcurrentHashMap<>();
    // Each fold's next offset, readable without the fold's lock.
    private final Map<Role, Long> readUpTo = new ConcurrentHashMap<>();
    // The folds of describes of many roles, apart from the contenders': a contender holds
    // its fold's lock while its read queues for the member's one consumer, and a describe
    // of many roles must not wait for each of them in turn.
    // At most MAX_DESCRIBED_FOLDS of them, least recently described first out: anyone who may
    // ask the endpoint for role names must not make this member keep a fold per name.
    private final Map<Role, RoleStateBuilder> describedViews =
            Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Role, RoleStateBuilder> eldest) {
                    return size() > MAX_DESCRIBED_FOLDS;
                }
            });
    /** How many roles' describe folds are kept; a role described again after eviction is read from the start. */
    public static final int MAX_DESCRIBED_FOLDS = 4_096;

    private final AtomicLong malformed = new AtomicLong();
    // The newest state of each contender's fold, readable without the folds' locks: what a
    // member's shares of its roles are counted from.
    private final Map<Role, RoleState> latest = new ConcurrentHashMap<>();

    RoleFolds(CoordinationTransport transport) {
        this.transport = transport;
    }

    /** How many describe folds are kept now. */
    int describedFolds() {
        return describedViews.size();
    }

    /** How many entries each per-role map of the contenders' folds holds (describe folds apart: they are bounded). */
    void sizes(Map<String, Integer> into) {
        into.put("folds.views", views.size());
        into.put("folds.readUpTo", readUpTo.size());
        into.put("folds.latest", latest.size());
    }

    /** How many malformed records were skipped so far. */
    long malformedRecords() {
        return malformed.get();
    }

    /** The role's folded state after reading what is new, waiting up to {@code maxWait} for news when nothing is. */
    RoleState refresh(Role role, Duration maxWait) {
        return refresh(role, views.computeIfAbsent(role, RoleState::builder), maxWait);
    }

    /**
     * As {@link #refresh} for a describe or an observe: from the contender's fold when this
     * client keeps one or {@code inUse} (a contender or an acquire of the role runs, so it
     * is kept and shared, and what the report reads the contender decides on), else from a
     * describe fold, so asking about a role keeps no fold for ever.
     */
    RoleState report(Role role, boolean inUse, Duration maxWait) {
        RoleStateBuilder view = inUse ? views.computeIfAbsent(role, RoleState::builder) : views.get(role);
        return refresh(role, view != null ? view : describedViews.computeIfAbsent(role, RoleState::builder), maxWait);
    }

    /**
     * Drops the role's folds (the describe fold too, which the balancer's reads of the role
     * filled): nothing of this client uses the role any more. The next use reads it from the start.
     */
    void forget(Role role) {
        describedViews.remove(role);
        RoleStateBuilder view = views.remove(role);
        if (view == null) {
            return;
        }
        // Under the fold's lock: a read in flight then sees it gone and puts nothing back.
        synchronized (view) {
            latest.remove(role);
            readUpTo.remove(role);
        }
    }

    private RoleState refresh(Role role, RoleStateBuilder view, Duration maxWait) {
        // Read without the fold's lock: a read of a partition without a leader blocks for a
        // whole timeout, and a describe (the endpoint, health) or the contender's next pass
        // must not wait for it on the lock. What one read brings is folded once: records a
        // concurrent read already folded are skipped.
        long from;
        synchronized (view) {
            from = view.nextOffset();
        }
        RoleRecords read = transport.read(role, from, maxWait);
        synchronized (view) {
            RoleState state = fold(role, view, read);
            // Only for a contender's fold still kept: a describe fold, or one forgotten meanwhile, is not.
            if (views.get(role) == view) {
                latest.put(role, state);
                readUpTo.put(role, view.nextOffset());
            }
            return state;
        }
    }

    /**
     * A renewal seen in the news, without reading: when the newest state of {@code role}
     * names the news's leadership (holder and grant time) with an earlier deadline, that
     * state's lease now runs until the news's deadline, but never past {@code bound} (one
     * lease from now, as for a lease read from the topic), so what the balancer counts as
     * running stays current. The next read folds the record itself.
     */
    void renewedInNews(Role role, RoleNews news, long bound) {
        if (!news.lease() || news.member() == null || news.deadline() == RoleNews.UNKNOWN) {
            return;
        }
        latest.computeIfPresent(role, (r, state) -> {
            long until = Math.min(news.deadline(), bound);
            return state.lease()
                            .filter(lease -> lease.member().equals(news.member())
                                    && lease.grantedAt() == news.grantedAt()
                                    && lease.deadline() < until)
                            .isEmpty()
                    ? state
                    : new RoleState(
                            r,
                            state.roster(),
                            state.lease().map(lease -> lease.withDeadline(until)),
                            state.leaseReleasedAt(),
                            state.nextOffset());
        });
    }

    /** The newest state each contender's fold reached, without reading. */
    Map<Role, RoleState> latestStates() {
        return Collections.unmodifiableMap(latest);
    }

    /**
     * Whether a read of {@code role} now could find nothing that a watcher of the role
     * registered before the last read of it was not (or will not soon be) woken for.
     */
    boolean quietSinceRead(Role role) {
        // Not the fold's lock: a read of the role may hold it for a whole timeout.
        Long next = readUpTo.get(role);
        return next != null && transport.tellsEverythingSince(role, next);
    }

    /** Whether the role's fold, if there is one, passes {@code test}, under the fold's lock. */
    boolean viewMatches(Role role, Predicate<RoleStateBuilder> test) {
        RoleStateBuilder view = views.get(role);
        if (view == null) {
            return false;
        }
        synchronized (view) {
            return test.test(view);
        }
    }

    /**
     * The states of many roles from their own folds (never a contender's): every
     * partition that holds some of them is read once, from the oldest next offset of the
     * roles on it, all in one {@link CoordinationTransport#readAll}.
     */
    Map<Role, RoleState> readMany(List<Role> distinct) {
        Map<Integer, List<Role>> byPartition = new LinkedHashMap<>();
        int partitions = transport.partitionCount();
        for (Role role : distinct) {
            byPartition
                    .computeIfAbsent(RolePartitioner.partitionFor(role, partitions), p -> new ArrayList<>())
                    .add(role);
        }
        Map<Role, Long> from = new LinkedHashMap<>();
        // This describe's folds, held here: the bounded map may evict one meanwhile.
        Map<Role, RoleStateBuilder> views = new HashMap<>();
        for (List<Role> sharing : byPartition.values()) {
            long oldest = Long.MAX_VALUE;
            for (Role role : sharing) {
                RoleStateBuilder view = describedViews.computeIfAbsent(role, RoleState::builder);
                views.put(role, view);
                synchronized (view) {
                    oldest = Math.min(oldest, view.nextOffset());
                }
            }
            from.put(sharing.get(0), oldest);
        }
        Map<Role, RoleRecords> read = transport.readAll(from);
        Map<Role, RoleState> states = new HashMap<>();
        for (List<Role> sharing : byPartition.values()) {
            RoleRecords batch = read.get(sharing.get(0));
            if (batch == null) {
                throw new IllegalStateException("the transport read nothing for role " + sharing.get(0) + ": "
                        + transport.getClass().getName() + " breaks the contract of readAll");
            }
            states.putAll(foldSharing(sharing, batch, views));
        }
        return states;
    }

    /**
     * Folds one read of a partition into the folds of the roles on it, each from its own
     * next offset, and returns their states.
     */
    private Map<Role, RoleState> foldSharing(List<Role> sharing, RoleRecords batch, Map<Role, RoleStateBuilder> views) {
        Map<Role, List<RawRecord>> byRole = new HashMap<>();
        Set<Role> wanted = Set.copyOf(sharing);
        for (RawRecord raw : batch.records()) {
            Role owner;
            try {
                owner = CoordinationCodec.decodeKey(raw.key()).role();
            } catch (MalformedRecordException e) {
                // Counted and logged by each fold that reads it, as on the single-role path.
                owner = null;
            }
            if (owner == null) {
                sharing.forEach(role ->
                        byRole.computeIfAbsent(role, r -> new ArrayList<>()).add(raw));
            } else if (wanted.contains(owner)) {
                byRole.computeIfAbsent(owner, r -> new ArrayList<>()).add(raw);
            }
        }
        Map<Role, RoleState> states = new HashMap<>();
        for (Role role : sharing) {
            RoleStateBuilder view = Objects.requireNonNull(views.get(role));
            synchronized (view) {
                for (RawRecord raw : byRole.getOrDefault(role, List.of())) {
                    fold(role, view, raw);
                }
                view.advanceTo(batch.nextOffset());
                states.put(role, view.build());
            }
        }
        return states;
    }

    /** Folds a batch read from the view's next offset (or before it) into it. Holds the view's lock. */
    private RoleState fold(Role role, RoleStateBuilder view, RoleRecords batch) {
        for (RawRecord raw : batch.records()) {
            fold(role, view, raw);
        }
        view.advanceTo(batch.nextOffset());
        return view.build();
    }

    /**
     * Folds one record, unless the view is past it: a concurrent read (the reads run
     * outside the fold's lock) already folded it, and decoding it again would count a
     * malformed record twice.
     */
    private void fold(Role role, RoleStateBuilder view, RawRecord raw) {
        if (raw.offset() < view.nextOffset()) {
            return;
        }
        try {
            CoordinationKey key = CoordinationCodec.decodeKey(raw.key());
            if (!key.role().equals(role)) {
                return;
            }
            Optional<CoordinationRecord> value = CoordinationCodec.decodeValue(key.kind(), raw.value());
            view.apply(raw.offset(), raw.timestamp(), key, value);
        } catch (MalformedRecordException e) {
            long count = malformed.incrementAndGet();
            log.warn(
                    "Skipping malformed record at offset {} of {} while reading role {} ({} skipped so far): {}",
                    raw.offset(),
                    transport.topic(),
                    role,
                    count,
                    e.getMessage());
        }
    }
}
