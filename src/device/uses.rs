//! Which queues have used one device buffer, so that a command on another queue is
//! ordered after them on the device: no host wait, and no event per launch.
//!
//! Threads issue on queues of their own (`crate::seal_backend`), and a buffer can move
//! between them: a result written on one thread's queue is read on another's after a join
//! or a channel, a shared plaintext is read on several at once. The host order of those
//! calls says nothing about the device order of different queues, so every use is
//! recorded here and, where a use on queue Q meets an earlier one on another queue P, a
//! marker on P (enqueued at that moment: it completes after everything P was given so far,
//! a superset of the earlier use) and a barrier on Q carry the dependency. Uses on the same
//! queue need nothing (in order), so a thread working on its own ciphertexts creates no
//! event at all.

use super::Graph;
use crate::cl::{self, Event, Queue};
use crate::error::Result;

/// The uses that later commands must wait for: the last writer and the readers since.
#[derive(Debug, Default)]
pub struct BufferUses {
    writer: Option<QueueUse>,
    readers: Vec<QueueUse>,
}

/// Commands of one queue up to now, with the marker standing for them once one was needed.
/// The queue is held through its `Graph` (an `Arc` clone): cloning an `ocl::Queue` is a
/// driver call, clRetainCommandQueue (and a release on drop), 2.0-2.4 us a pair on
/// NVIDIA's driver.
struct QueueUse {
    graph: Graph,
    marker: Option<Event>,
}

impl QueueUse {
    fn new(graph: &Graph) -> QueueUse {
        QueueUse {
            graph: graph.clone(),
            marker: None,
        }
    }

    fn queue(&self) -> &Queue {
        self.graph.queue()
    }

    /// A marker after this use, made on the first request and shared by later ones (it
    /// still covers the use: nothing is recorded in this entry after it).
    fn marker(&mut self) -> Result<Event> {
        if let Some(marker) = &self.marker {
            return Ok(marker.clone());
        }
        let marker = cl::marker(self.queue())?;
        self.marker = Some(marker.clone());
        Ok(marker)
    }
}

impl std::fmt::Debug for QueueUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueUse")
            .field("tile", &self.graph.tile().index())
            .field("queue", &self.graph.queue_index())
            .field("marker", &self.marker.is_some())
            .finish()
    }
}

impl BufferUses {
    /// Contents just written by commands on `graph`'s queue.
    pub fn written_on(graph: &Graph) -> BufferUses {
        BufferUses {
            writer: Some(QueueUse::new(graph)),
            readers: Vec::new(),
        }
    }

    /// Orders commands enqueued on `graph`'s queue after this call behind the last writer,
    /// and records that queue as a reader (a later writer waits for it).
    pub fn before_read(&mut self, graph: &Graph) -> Result<()> {
        let queue = graph.queue();
        if let Some(writer) = &self.writer {
            if cl::same_queue(writer.queue(), queue) {
                // Reads on the writer's queue are in order behind it: no entry needed.
                return Ok(());
            }
        }
        if let Some(reader) = self
            .readers
            .iter_mut()
            .find(|r| cl::same_queue(r.queue(), queue))
        {
            // Its first read since the write put a barrier behind the writer on this
            // in-order queue; later reads there follow it. A marker made before this read
            // does not cover it.
            reader.marker = None;
            return Ok(());
        }
        if let Some(writer) = self.writer.as_mut() {
            cl::enqueue_barrier(queue, &[writer.marker()?])?;
        }
        self.readers.push(QueueUse::new(graph));
        Ok(())
    }

    /// Orders commands enqueued on `graph`'s queue after this call behind every recorded
    /// use on another queue, then records that queue as the only writer.
    pub fn before_write(&mut self, graph: &Graph) -> Result<()> {
        let waits = self.markers_except(graph.queue())?;
        cl::enqueue_barrier(graph.queue(), &waits)?;
        self.set_written_on(graph);
        Ok(())
    }

    /// Records contents just written by commands on `graph`'s queue (what `written_on`
    /// makes), keeping the writer's entry where it is that queue already.
    pub fn set_written_on(&mut self, graph: &Graph) {
        self.readers.clear();
        match &mut self.writer {
            Some(writer) if cl::same_queue(writer.queue(), graph.queue()) => writer.marker = None,
            writer => *writer = Some(QueueUse::new(graph)),
        }
    }

    /// The queue whose commands a host read must follow: the last writer's, if any.
    pub fn writer_queue(&self) -> Option<&Queue> {
        self.writer.as_ref().map(QueueUse::queue)
    }

    /// Markers after every recorded use on a queue other than `queue`.
    pub fn markers_except(&mut self, queue: &Queue) -> Result<Vec<Event>> {
        self.writer
            .iter_mut()
            .chain(self.readers.iter_mut())
            .filter(|u| !cl::same_queue(u.queue(), queue))
            .map(QueueUse::marker)
            .collect()
    }

    /// Waits on the host for every queue with a recorded use (the fallback where a marker
    /// cannot be made, e.g. after a device error).
    pub fn finish_all(&self) -> Result<()> {
        for u in self.writer.iter().chain(self.readers.iter()) {
            cl::finish(u.queue())?;
        }
        Ok(())
    }
}
