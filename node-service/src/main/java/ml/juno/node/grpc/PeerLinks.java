package ml.juno.node.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.TimeUnit;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.wire.Activations;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.runtime.RankReduce;
import ml.juno.node.v1.NodeServiceGrpc;
import ml.juno.node.v1.PeerPartial;
import ml.juno.node.v1.ReduceSummary;
import ml.juno.node.v1.Tensor;

/**
 * One tensor slice's links to the other ranks of its group, or a pipeline stage's link to the next stage: a channel per
 * peer and on it one long-lived client stream ({@code Reduce}) that carries this rank's partial of every all-reduce, or
 * this stage's output rows of every step. A stream opens when the first partial goes
 * out and again after it broke (a restarted peer is dialled at once, not after gRPC's growing backoff); when it breaks,
 * the wait for that peer's partial fails with the reason ({@link RankReduce#ended}). Sends come from the inference
 * thread only. Each channel runs its callbacks on its transport thread ({@code directExecutor}): they only note a
 * broken stream.
 */
final class PeerLinks implements RankReduce.Outbound {
    private static final int MAX_MESSAGE = 512 * 1024 * 1024;

    private final java.util.List<String> peers;
    private final int self;
    private final long group;
    private final java.util.function.BiConsumer<Integer, String> ended;
    private final ManagedChannel[] channels;
    private final Stream[] streams;

    /** One open {@code Reduce} call; {@code broken} once the peer's side ended it. */
    private static final class Stream {
        final StreamObserver<PeerPartial> out;
        volatile boolean broken;

        Stream(NodeServiceGrpc.NodeServiceStub stub, int rank, String address, java.util.function.BiConsumer<Integer, String> ended) {
            this.out = stub.reduce(new StreamObserver<>() {
                @Override
                public void onNext(ReduceSummary value) {
                }

                @Override
                public void onError(Throwable t) {
                    broken = true;
                    Status s = Status.fromThrowable(t);
                    ended.accept(rank, "the link to rank " + rank + " (" + address + ") broke: " + s.getCode()
                            + (s.getDescription() == null ? "" : " (" + s.getDescription() + ")"));
                }

                @Override
                public void onCompleted() {
                    broken = true;
                    ended.accept(rank, "rank " + rank + " (" + address + ") closed its link");
                }
            });
        }
    }

    /** A tensor rank's links to every other rank of its group. */
    PeerLinks(ShardLoad.Tensor shard, RankReduce reduce, ChannelCredentials credentials) {
        this(shard.peers(), shard.rank(), shard.group(), all(shard.worldSize(), shard.rank()), reduce::ended, credentials);
    }

    /** A pipeline stage's link to the next stage (nothing waits on it: a break only reopens the stream). */
    PeerLinks(ShardLoad.Pipeline stage, ChannelCredentials credentials) {
        this(stage.stages(), stage.stage(), stage.group(), new int[] {stage.stage() + 1}, (r, why) -> {}, credentials);
    }

    private PeerLinks(java.util.List<String> peers, int self, long group, int[] targets,
                      java.util.function.BiConsumer<Integer, String> ended, ChannelCredentials credentials) {
        this.peers = peers;
        this.self = self;
        this.group = group;
        this.ended = ended;
        this.channels = new ManagedChannel[peers.size()];
        this.streams = new Stream[peers.size()];
        for (int r : targets) {
            HostPort a = HostPort.parse(peers.get(r));
            channels[r] = Grpc.newChannelBuilderForAddress(a.host(), a.port(), credentials).maxInboundMessageSize(MAX_MESSAGE)
                    .directExecutor().build();
        }
    }

    private static int[] all(int n, int self) {
        return java.util.stream.IntStream.range(0, n).filter(r -> r != self).toArray();
    }

    private Stream stream(int r) {
        Stream s = streams[r];
        if (s == null || s.broken) {
            channels[r].resetConnectBackoff();
            s = new Stream(NodeServiceGrpc.newStub(channels[r]).withMaxOutboundMessageSize(MAX_MESSAGE), r, peers.get(r), ended);
            streams[r] = s;
        }
        return s;
    }

    @Override
    public long send(long stepId, int index, Activations partial, boolean[] to) {
        Tensor t = ProtoMapping.toProto(partial);
        PeerPartial m = PeerPartial.newBuilder().setGroup(group).setFromRank(self).setStepId(stepId).setIndex(index)
                .setPartial(t).build();
        long bytes = 0;
        for (int r = 0; r < channels.length; r++) {
            if (channels[r] != null && (to == null || to[r])) {
                stream(r).out.onNext(m);
                bytes += m.getSerializedSize();
            }
        }
        return bytes;
    }

    @Override
    public void close() {
        for (int r = 0; r < channels.length; r++) {
            Stream s = streams[r];
            if (s != null && !s.broken) {
                try {
                    s.out.onCompleted();
                } catch (RuntimeException ignored) {
                    // the call is gone already
                }
            }
            if (channels[r] != null) {
                channels[r].shutdown();
            }
        }
        for (ManagedChannel c : channels) {
            if (c != null) {
                try {
                    if (!c.awaitTermination(1, TimeUnit.SECONDS)) {
                        c.shutdownNow();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    c.shutdownNow();
                }
            }
        }
    }

    /** {@code host:port} (an IPv6 host in brackets). */
    record HostPort(String host, int port) {
        static HostPort parse(String s) {
            int colon = s.lastIndexOf(':');
            if (colon <= 0 || colon == s.length() - 1) {
                throw new IllegalArgumentException("peer address '" + s + "' is not host:port");
            }
            String host = s.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            try {
                return new HostPort(host, Integer.parseInt(s.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("peer address '" + s + "' is not host:port");
            }
        }
    }
}
