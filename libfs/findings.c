// SPDX-License-Identifier: GPL-2.0
/*
 * The findings table and the records made from it.  Every problem any xfsx
 * tool can report is one row here (stable code, severity, fixable, summary);
 * verifiers record instances, and human text and JSON are rendered from the
 * same records so the two never disagree.
 */
#include "libfs/findings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define E FS_SEV_ERROR
#define W FS_SEV_WARNING
#define I FS_SEV_INFO

static const struct fs_finding_def table[] = {
	/* superblocks */
	{ "sb.unreadable",      E, false, "superblock could not be read" },
	{ "sb.magic",           E, true,  "superblock magic number is wrong" },
	{ "sb.crc",             E, true,  "superblock CRC does not match its contents" },
	{ "sb.version",         E, false, "superblock version is not a v5 version" },
	{ "sb.feature",         E, false, "superblock feature flags are invalid or unknown" },
	{ "sb.geometry",        E, true,  "superblock geometry field is invalid" },
	{ "sb.log",             E, true,  "superblock log geometry is invalid" },
	{ "sb.rtgeometry",      E, true,  "superblock realtime geometry is invalid" },
	{ "sb.stripe",          E, true,  "superblock stripe geometry is invalid" },
	{ "sb.inodes",          E, true,  "superblock inode geometry is invalid" },
	{ "sb.counter",         E, true,  "superblock counter is impossible" },
	{ "sb.quota",           E, true,  "superblock quota fields are invalid" },
	{ "sb.uuid",            E, true,  "superblock UUID does not match the filesystem" },
	{ "sb.lsn",             E, true,  "superblock LSN is beyond the log head" },
	{ "sb.inprogress",      E, true,  "superblock says mkfs did not finish" },
	{ "sb.secondary",       E, true,  "secondary superblock disagrees with the primary" },
	{ "sb.garbage",         E, true,  "bytes past the end of the superblock are not zero" },
	{ "sb.primary_bad",     E, true,  "primary superblock unusable, geometry taken from a secondary" },
	/* AGF */
	{ "agf.unreadable",     E, false, "AGF could not be read" },
	{ "agf.magic",          E, true,  "AGF magic number is wrong" },
	{ "agf.crc",            E, true,  "AGF CRC does not match its contents" },
	{ "agf.version",        E, true,  "AGF version is wrong" },
	{ "agf.uuid",           E, true,  "AGF UUID does not match the filesystem" },
	{ "agf.lsn",            E, true,  "AGF LSN is invalid" },
	{ "agf.seqno",          E, true,  "AGF sequence number is not its AG number" },
	{ "agf.length",         E, true,  "AGF length does not match the AG size" },
	{ "agf.freelist",       E, true,  "AGF free list indexes or count are invalid" },
	{ "agf.freeblks",       E, true,  "AGF free block counters are impossible" },
	{ "agf.levels",         E, true,  "AGF btree height is outside what the geometry allows" },
	{ "agf.root",           E, true,  "AGF btree root is outside the AG or on its headers" },
	{ "agf.btreeblks",      E, true,  "AGF btree block counter is impossible" },
	/* free space (bno) btree blocks (check phase 2) */
	{ "bnobt.unreadable",    E, true,  "free space (bno) btree block could not be read" },
	{ "bnobt.magic",         E, true,  "free space (bno) btree block magic number is wrong" },
	{ "bnobt.crc",           E, true,  "free space (bno) btree block CRC does not match its contents" },
	{ "bnobt.uuid",          E, true,  "free space (bno) btree block UUID does not match the filesystem" },
	{ "bnobt.lsn",           E, true,  "free space (bno) btree block LSN is beyond the log" },
	{ "bnobt.owner",         E, true,  "free space (bno) btree block belongs to another AG" },
	{ "bnobt.blkno",         E, true,  "free space (bno) btree block says it lives at another address" },
	{ "bnobt.level",         E, true,  "free space (bno) btree block level is wrong for its place in the tree" },
	{ "bnobt.numrecs",       E, true,  "free space (bno) btree block record count is impossible" },
	{ "bnobt.sibling",       E, true,  "free space (bno) btree sibling pointers do not link the blocks of a level in order" },
	{ "bnobt.ptr",           E, true,  "free space (bno) btree pointer is outside the AG" },
	{ "bnobt.key",           E, true,  "free space (bno) btree node key does not match its child" },
	{ "bnobt.order",         E, true,  "free space (bno) btree keys or records are out of order" },
	{ "bnobt.loop",          E, true,  "free space (bno) btree block is reached twice (loop or shared subtree)" },
	{ "bnobt.depth",         E, true,  "free space (bno) btree height is outside what the geometry allows" },
	/* free space (cnt) btree blocks (check phase 2) */
	{ "cntbt.unreadable",    E, true,  "free space (cnt) btree block could not be read" },
	{ "cntbt.magic",         E, true,  "free space (cnt) btree block magic number is wrong" },
	{ "cntbt.crc",           E, true,  "free space (cnt) btree block CRC does not match its contents" },
	{ "cntbt.uuid",          E, true,  "free space (cnt) btree block UUID does not match the filesystem" },
	{ "cntbt.lsn",           E, true,  "free space (cnt) btree block LSN is beyond the log" },
	{ "cntbt.owner",         E, true,  "free space (cnt) btree block belongs to another AG" },
	{ "cntbt.blkno",         E, true,  "free space (cnt) btree block says it lives at another address" },
	{ "cntbt.level",         E, true,  "free space (cnt) btree block level is wrong for its place in the tree" },
	{ "cntbt.numrecs",       E, true,  "free space (cnt) btree block record count is impossible" },
	{ "cntbt.sibling",       E, true,  "free space (cnt) btree sibling pointers do not link the blocks of a level in order" },
	{ "cntbt.ptr",           E, true,  "free space (cnt) btree pointer is outside the AG" },
	{ "cntbt.key",           E, true,  "free space (cnt) btree node key does not match its child" },
	{ "cntbt.order",         E, true,  "free space (cnt) btree keys or records are out of order" },
	{ "cntbt.loop",          E, true,  "free space (cnt) btree block is reached twice (loop or shared subtree)" },
	{ "cntbt.depth",         E, true,  "free space (cnt) btree height is outside what the geometry allows" },
	/* reverse mapping btree blocks (check phase 2) */
	{ "rmapbt.unreadable",   E, true,  "reverse mapping btree block could not be read" },
	{ "rmapbt.magic",        E, true,  "reverse mapping btree block magic number is wrong" },
	{ "rmapbt.crc",          E, true,  "reverse mapping btree block CRC does not match its contents" },
	{ "rmapbt.uuid",         E, true,  "reverse mapping btree block UUID does not match the filesystem" },
	{ "rmapbt.lsn",          E, true,  "reverse mapping btree block LSN is beyond the log" },
	{ "rmapbt.owner",        E, true,  "reverse mapping btree block belongs to another AG" },
	{ "rmapbt.blkno",        E, true,  "reverse mapping btree block says it lives at another address" },
	{ "rmapbt.level",        E, true,  "reverse mapping btree block level is wrong for its place in the tree" },
	{ "rmapbt.numrecs",      E, true,  "reverse mapping btree block record count is impossible" },
	{ "rmapbt.sibling",      E, true,  "reverse mapping btree sibling pointers do not link the blocks of a level in order" },
	{ "rmapbt.ptr",          E, true,  "reverse mapping btree pointer is outside the AG" },
	{ "rmapbt.key",          E, true,  "reverse mapping btree node key does not match its child" },
	{ "rmapbt.order",        E, true,  "reverse mapping btree keys or records are out of order" },
	{ "rmapbt.loop",         E, true,  "reverse mapping btree block is reached twice (loop or shared subtree)" },
	{ "rmapbt.depth",        E, true,  "reverse mapping btree height is outside what the geometry allows" },
	{ "rmapbt.rec",          E, true,  "reverse mapping btree record is invalid" },
	/* reference count btree blocks (check phase 2) */
	{ "refcbt.unreadable",   E, true,  "reference count btree block could not be read" },
	{ "refcbt.magic",        E, true,  "reference count btree block magic number is wrong" },
	{ "refcbt.crc",          E, true,  "reference count btree block CRC does not match its contents" },
	{ "refcbt.uuid",         E, true,  "reference count btree block UUID does not match the filesystem" },
	{ "refcbt.lsn",          E, true,  "reference count btree block LSN is beyond the log" },
	{ "refcbt.owner",        E, true,  "reference count btree block belongs to another AG" },
	{ "refcbt.blkno",        E, true,  "reference count btree block says it lives at another address" },
	{ "refcbt.level",        E, true,  "reference count btree block level is wrong for its place in the tree" },
	{ "refcbt.numrecs",      E, true,  "reference count btree block record count is impossible" },
	{ "refcbt.sibling",      E, true,  "reference count btree sibling pointers do not link the blocks of a level in order" },
	{ "refcbt.ptr",          E, true,  "reference count btree pointer is outside the AG" },
	{ "refcbt.key",          E, true,  "reference count btree node key does not match its child" },
	{ "refcbt.order",        E, true,  "reference count btree keys or records are out of order" },
	{ "refcbt.loop",         E, true,  "reference count btree block is reached twice (loop or shared subtree)" },
	{ "refcbt.depth",        E, true,  "reference count btree height is outside what the geometry allows" },
	{ "refcbt.rec",          E, true,  "reference count btree record is invalid" },
	/* free space as a whole (check phase 2) */
	{ "freesp.rec",         E, true,  "free space record is not a valid extent of its AG" },
	{ "freesp.overlap",     E, true,  "free space records overlap" },
	{ "freesp.mismatch",    E, true,  "the bno and cnt btrees do not describe the same free extents" },
	{ "agf.counters",       E, true,  "AGF counter disagrees with what the btree scan found" },
	{ "sb.counters",        E, true,  "superblock counter disagrees with what the scan found" },
	{ "agi.counters",       E, true,  "AGI counter disagrees with what the inode btree scan found" },
	{ "finobt.mismatch",    E, true,  "the free inode btree does not hold exactly the inode btree records with free inodes" },
	{ "inobt.freemask",     E, true,  "inode in use on disk is marked free in the inode btree" },
	/* block ownership (the in-core model) */
	{ "block.dup",          E, true,  "block is claimed by more than one owner" },
	{ "block.leak",         E, true,  "blocks are neither free nor used by anything (leaked)" },
	{ "rmap.missing",       E, true,  "blocks in use have no reverse mapping" },
	{ "rmap.extra",         E, true,  "reverse mapping names an owner that does not use those blocks" },
	{ "rmap.mismatch",      E, true,  "reverse mapping differs from the observed owner (offset or flags)" },
	{ "refcount.missing",   E, true,  "shared data blocks have no reference count record" },
	{ "refcount.extra",     E, true,  "reference count record for blocks that are not shared" },
	{ "refcount.mismatch",  E, true,  "reference count differs from the number of data mappings" },
	/* AGI */
	{ "agi.unreadable",     E, false, "AGI could not be read" },
	{ "agi.magic",          E, true,  "AGI magic number is wrong" },
	{ "agi.crc",            E, true,  "AGI CRC does not match its contents" },
	{ "agi.version",        E, true,  "AGI version is wrong" },
	{ "agi.uuid",           E, true,  "AGI UUID does not match the filesystem" },
	{ "agi.lsn",            E, true,  "AGI LSN is invalid" },
	{ "agi.seqno",          E, true,  "AGI sequence number is not its AG number" },
	{ "agi.length",         E, true,  "AGI length does not match the AG size" },
	{ "agi.count",          E, true,  "AGI inode counters are impossible" },
	{ "agi.levels",         E, true,  "AGI btree height is outside what the geometry allows" },
	{ "agi.root",           E, true,  "AGI btree root is outside the AG or on its headers" },
	{ "agi.newino",         E, true,  "AGI newest inode number cannot exist" },
	{ "agi.dirino",         E, true,  "AGI dirino is not NULL" },
	{ "agi.unlinked",       E, true,  "AGI unlinked bucket points at an inode that cannot exist" },
	{ "agi.blocks",         E, true,  "AGI inode btree block counters are impossible" },
	/* AGFL */
	{ "agfl.unreadable",    E, false, "AGFL could not be read" },
	{ "agfl.magic",         E, true,  "AGFL magic number is wrong" },
	{ "agfl.crc",           E, true,  "AGFL CRC does not match its contents" },
	{ "agfl.uuid",          E, true,  "AGFL UUID does not match the filesystem" },
	{ "agfl.lsn",           E, true,  "AGFL LSN is invalid" },
	{ "agfl.seqno",         E, true,  "AGFL sequence number is not its AG number" },
	{ "agfl.bno",           E, true,  "AGFL entry is not a valid block of this AG" },
	/* inode btree blocks and records */
	{ "inobt.unreadable",    E, true, "inode btree block could not be read" },
	{ "inobt.magic",         E, true, "inode btree block magic number is wrong" },
	{ "inobt.crc",           E, true, "inode btree block CRC does not match its contents" },
	{ "inobt.uuid",          E, true, "inode btree block UUID does not match the filesystem" },
	{ "inobt.lsn",           E, true, "inode btree block LSN is beyond the log" },
	{ "inobt.owner",         E, true, "inode btree block belongs to another AG" },
	{ "inobt.blkno",         E, true, "inode btree block says it lives at another address" },
	{ "inobt.level",         E, true, "inode btree block level is wrong for its place in the tree" },
	{ "inobt.numrecs",       E, true, "inode btree block record count is impossible" },
	{ "inobt.sibling",       E, true, "inode btree sibling pointers do not link the blocks of a level in order" },
	{ "inobt.ptr",           E, true, "inode btree pointer is outside the AG" },
	{ "inobt.key",           E, true, "inode btree node key does not match its child" },
	{ "inobt.order",         E, true, "inode btree keys or records are out of order" },
	{ "inobt.loop",          E, true, "inode btree block is reached twice (loop or shared subtree)" },
	{ "inobt.depth",         E, true, "inode btree height is outside what the geometry allows" },
	{ "inobt.rec",           E, true, "inode btree record is invalid" },
	/* free inode btree blocks and records */
	{ "finobt.unreadable",   E, true, "free inode btree block could not be read" },
	{ "finobt.magic",        E, true, "free inode btree block magic number is wrong" },
	{ "finobt.crc",          E, true, "free inode btree block CRC does not match its contents" },
	{ "finobt.uuid",         E, true, "free inode btree block UUID does not match the filesystem" },
	{ "finobt.lsn",          E, true, "free inode btree block LSN is beyond the log" },
	{ "finobt.owner",        E, true, "free inode btree block belongs to another AG" },
	{ "finobt.blkno",        E, true, "free inode btree block says it lives at another address" },
	{ "finobt.level",        E, true, "free inode btree block level is wrong for its place in the tree" },
	{ "finobt.numrecs",      E, true, "free inode btree block record count is impossible" },
	{ "finobt.sibling",      E, true, "free inode btree sibling pointers do not link the blocks of a level in order" },
	{ "finobt.ptr",          E, true, "free inode btree pointer is outside the AG" },
	{ "finobt.key",          E, true, "free inode btree node key does not match its child" },
	{ "finobt.order",        E, true, "free inode btree keys or records are out of order" },
	{ "finobt.loop",         E, true, "free inode btree block is reached twice (loop or shared subtree)" },
	{ "finobt.depth",        E, true, "free inode btree height is outside what the geometry allows" },
	{ "finobt.rec",          E, true, "free inode btree record is invalid" },
	/* inodes */
	{ "inode.unreadable",    E, false, "inode chunk could not be read" },
	{ "inode.magic",         E, true, "inode magic number is wrong" },
	{ "inode.crc",           E, true, "inode CRC does not match its contents" },
	{ "inode.uuid",          E, true, "inode UUID does not match the filesystem" },
	{ "inode.lsn",           E, true, "inode LSN is beyond the log" },
	{ "inode.version",       E, true, "inode version is not 3" },
	{ "inode.ino",           E, true, "inode number stored in the inode is not its own" },
	{ "inode.free",          E, true, "inode allocated in the inode btree is free on disk (mode 0)" },
	{ "inode.mode",          E, true, "inode file type is unknown" },
	{ "inode.size",          E, true, "inode size is impossible for its type or format" },
	{ "inode.nrext64",       E, true, "inode large extent counter flags or padding are invalid" },
	{ "inode.nblocks",       E, true, "inode block count is lower than its extent count" },
	{ "inode.nextents",      E, true, "inode extent count is impossible for its fork" },
	{ "inode.forkoff",       E, true, "inode attr fork offset is invalid" },
	{ "inode.format",        E, true, "inode data fork format is invalid for its type" },
	{ "inode.aformat",       E, true, "inode attr fork format is invalid" },
	{ "inode.extsize",       E, true, "inode extent size hint is invalid" },
	{ "inode.cowextsize",    E, true, "inode CoW extent size hint is invalid" },
	{ "inode.flags",         E, true, "inode flags are invalid for its type or the filesystem features" },
	{ "inode.reflink",       E, true, "inode shares data blocks but lacks the reflink flag" },
	{ "inode.onlink",        E, true, "inode's obsolete version 1 link count (di_onlink) is not zero" },
	{ "inode.unlinked",      E, true, "inode unlinked list pointer names no inode" },
	{ "inode.timestamp",     E, true, "inode legacy timestamp nanoseconds not below one second" },
	/* dir/attr DA3 node blocks (libfs/da.c) */
	{ "da.unreadable",       E, true, "DA node block could not be read" },
	{ "da.magic",            E, true, "DA node block magic number is wrong" },
	{ "da.crc",              E, true, "DA node block CRC does not match its contents" },
	{ "da.uuid",             E, true, "DA node block UUID does not match the filesystem" },
	{ "da.lsn",              E, true, "DA node block LSN is beyond the log" },
	{ "da.owner",            E, true, "DA node block belongs to another inode" },
	{ "da.blkno",            E, true, "DA node block says it lives at another address" },
	{ "da.level",            E, true, "DA node level is impossible or wrong for its place in the tree" },
	{ "da.count",            E, true, "DA node entry count is zero or does not fit the block" },
	{ "da.order",            E, true, "DA node hash values are out of order" },
	{ "da.ptr",              E, true, "DA node child pointer is outside the fork's range" },
	{ "da.hash",             E, true, "DA node key does not match the highest hash of its child" },
	{ "da.loop",             E, true, "DA block is reached twice (loop or shared subtree)" },
	{ "da.sibling",          E, true, "DA sibling pointers do not link the blocks of a level in order" },
	/* directories (libfs/dir.c, check phase dirs) */
	{ "dir.unreadable",      E, true, "directory block could not be read" },
	{ "dir.magic",           E, true, "directory block magic number is wrong" },
	{ "dir.crc",             E, true, "directory block CRC does not match its contents" },
	{ "dir.uuid",            E, true, "directory block UUID does not match the filesystem" },
	{ "dir.lsn",             E, true, "directory block LSN is beyond the log" },
	{ "dir.owner",           E, true, "directory block belongs to another inode" },
	{ "dir.blkno",           E, true, "directory block says it lives at another address" },
	{ "dir.format",          E, true, "directory block mapping fits no directory format" },
	{ "dir.size",            E, true, "directory size does not match its blocks" },
	{ "dir.sf",              E, true, "short form directory header, offsets or size are invalid" },
	{ "dir.namelen",         E, true, "directory entry name length is zero or runs past the block" },
	{ "dir.name",            E, true, "directory entry name contains '/' or NUL" },
	{ "dir.tag",             E, true, "directory entry or free region tag is not its offset" },
	{ "dir.unused",          E, true, "directory free region is malformed" },
	{ "dir.bestfree",        E, true, "directory data block bestfree table is not its largest free regions" },
	{ "dir.ino",             E, true, "directory entry names an inode number that cannot exist" },
	{ "dir.ftype",           E, true, "directory entry file type is unknown or not the inode's type" },
	{ "dir.count",           E, true, "directory leaf entry count does not fit the block" },
	{ "dir.stale",           E, true, "directory leaf stale count is wrong" },
	{ "dir.hash_order",      E, true, "directory leaf hash values are out of order" },
	{ "dir.bad_hash",        E, true, "directory leaf hash is not the hash of the entry's name" },
	{ "dir.leaf",            E, true, "directory leaf entries do not match the data entries" },
	{ "dir.bests",           E, true, "directory best free table disagrees with the data blocks" },
	{ "dir.free",            E, true, "directory free index block header is wrong" },
	{ "dir.dup_name",        E, true, "directory holds the same name more than once" },
	{ "dir.dot",             E, true, "directory \".\" entry is missing, misplaced or not the directory" },
	{ "dir.dotdot",          E, true, "directory \"..\" entry is missing or misplaced" },
	{ "dir.parent",          E, true, "directory \"..\" does not name the directory's parent" },
	{ "dir.entry_free",      E, true, "directory entry names an inode that is not allocated" },
	{ "dir.hardlink",        E, true, "directory is linked from more than one directory" },
	{ "dir.not_dir",         E, true, "directory-format data in an inode that is not a directory" },
	{ "inode.nlink",         E, true, "inode link count differs from the directory references to it" },
	{ "inode.unreachable",   E, true, "inode in use is not reachable from the root directory" },
	/* extended attributes (check phase attrs) */
	{ "attr.magic",          E, true, "attr leaf block magic number is wrong" },
	{ "attr.crc",            E, true, "attr leaf block CRC does not match its contents" },
	{ "attr.uuid",           E, true, "attr leaf block UUID does not match the filesystem" },
	{ "attr.lsn",            E, true, "attr leaf block LSN is beyond the log" },
	{ "attr.owner",          E, true, "attr leaf block belongs to another inode" },
	{ "attr.blkno",          E, true, "attr leaf block says it lives at another address" },
	{ "attr.firstused",      E, true, "attr leaf first used byte is wrong" },
	{ "attr.count",          E, true, "attr leaf entry count is impossible" },
	{ "attr.nameidx",        E, true, "attr leaf entry name offset is outside the name area" },
	{ "attr.entry",          E, true, "attr leaf entry runs past the block end" },
	{ "attr.flags",          E, true, "attr entry flags are invalid" },
	{ "attr.incomplete",     E, true, "attr entry is marked incomplete" },
	{ "attr.name",           E, true, "attr entry name is empty or contains a NUL" },
	{ "attr.remote",         E, true, "attr entry remote value is invalid or unreadable" },
	{ "attr.overlap",        E, true, "attr leaf entries overlap" },
	{ "attr.order",          E, true, "attr entries or node keys are out of hash order" },
	{ "attr.hash",           E, true, "attr entry hash does not match its name" },
	{ "attr.usedbytes",      E, true, "attr leaf used byte count is wrong" },
	{ "attr.freemap",        E, true, "attr leaf free map is invalid" },
	{ "attr.sf_size",        E, true, "short form attr size is invalid" },
	{ "attr.sf_entry",       E, true, "short form attr entry runs past the end" },
	{ "attr.sf_name",        E, true, "short form attr name is empty or contains a NUL" },
	{ "attr.sf_flags",       E, true, "short form attr flags are invalid" },
	{ "attr.unreadable",     E, true, "attr fork block could not be read" },
	{ "attr.tree",           E, true, "attr fork block is not what its place in the tree needs" },
	{ "attr.sibling",        E, true, "attr leaf sibling pointers do not chain the leaves in order" },
	{ "attr.unreachable",    E, true, "attr fork block is mapped but neither in the tree nor a value" },
	/* remote attr value blocks */
	{ "attrrmt.magic",       E, true, "remote attr value block magic number is wrong" },
	{ "attrrmt.crc",         E, true, "remote attr value block CRC does not match its contents" },
	{ "attrrmt.uuid",        E, true, "remote attr value block UUID does not match the filesystem" },
	{ "attrrmt.lsn",         E, true, "remote attr value block LSN is beyond the log" },
	{ "attrrmt.owner",       E, true, "remote attr value block belongs to another inode" },
	{ "attrrmt.blkno",       E, true, "remote attr value block says it lives at another address" },
	{ "attrrmt.offset",      E, true, "remote attr value block offset is wrong" },
	{ "attrrmt.bytes",       E, true, "remote attr value block byte count is wrong" },
	/* symbolic links */
	{ "symlink.magic",       E, true, "remote symlink block magic number is wrong" },
	{ "symlink.crc",         E, true, "remote symlink block CRC does not match its contents" },
	{ "symlink.uuid",        E, true, "remote symlink block UUID does not match the filesystem" },
	{ "symlink.lsn",         E, true, "remote symlink block LSN is beyond the log" },
	{ "symlink.owner",       E, true, "remote symlink block belongs to another inode" },
	{ "symlink.blkno",       E, true, "remote symlink block says it lives at another address" },
	{ "symlink.offset",      E, true, "remote symlink block offset is wrong" },
	{ "symlink.bytes",       E, true, "remote symlink block byte count is wrong" },
	{ "symlink.size",        E, true, "symlink target length is impossible or disagrees with its blocks" },
	{ "symlink.target",      E, true, "symlink target contains a NUL byte" },
	{ "symlink.unreadable",  E, true, "remote symlink block could not be read" },
	/* device files, fifos, sockets */
	{ "special.size",        E, true, "special file has a nonzero size" },
	{ "special.extents",     E, true, "special file has data blocks or extents" },
	/* quota and realtime metadata inodes */
	{ "dquot.magic",         E, true, "dquot magic number is wrong" },
	{ "dquot.crc",           E, true, "dquot CRC does not match its contents" },
	{ "dquot.uuid",          E, true, "dquot UUID does not match the filesystem" },
	{ "dquot.lsn",           E, true, "dquot LSN is beyond the log" },
	{ "dquot.version",       E, true, "dquot version is wrong" },
	{ "dquot.type",          E, true, "dquot type is invalid" },
	{ "dquot.id",            E, true, "dquot id does not match its place in the quota file" },
	{ "dquot.timer",         E, true, "dquot over its soft limit has no grace timer" },
	{ "dquot.unreadable",    E, true, "quota file block could not be read" },
	{ "quota.inode",         E, true, "quota inode is not a usable regular file" },
	{ "rt.inode",            E, true, "realtime bitmap or summary inode is not what the superblock says" },
	/* unlinked inode lists (AGI buckets) */
	{ "unlinked.free",       E, true, "inode on an unlinked list is not allocated" },
	{ "unlinked.nlink",      E, true, "inode on an unlinked list still has links" },
	{ "unlinked.bucket",     E, true, "inode is on the wrong unlinked bucket" },
	{ "unlinked.loop",       E, true, "unlinked list loops or an inode is on two lists" },
	{ "unlinked.next",       E, true, "unlinked list pointer names no allocated inode" },
	{ "unlinked.linked",     E, true, "inode with links has an unlinked list pointer" },
	{ "unlinked.pending",    E, true, "AGI unlinked lists hold inodes a clean log leaves unfreed" },
	{ "unlinked.orphan",     E, true, "allocated inode with no links is on no unlinked list" },
	/* log */
	/* inode fork block maps (libfs/bmap.c; check phase forks) */
	{ "bmap.blockcount",    E, true,  "fork extent has no blocks" },
	{ "bmap.offset",        E, true,  "fork extent ends past the largest file offset" },
	{ "bmap.startblock",    E, true,  "fork extent starts outside the filesystem or on AG headers" },
	{ "bmap.ag_end",        E, true,  "fork extent runs past the end of its AG" },
	{ "bmap.unwritten",     E, true,  "unwritten extent outside a regular file's data fork" },
	{ "bmap.order",         E, true,  "fork extents overlap or are out of offset order" },
	{ "bmap.count",         E, true,  "fork extent count differs from the inode's counter" },
	/* block map btree blocks (long format, rooted in an inode fork) */
	{ "bmbt.root",          E, true,  "block map btree root in the inode is invalid" },
	{ "bmbt.unreadable",    E, true,  "block map btree block could not be read" },
	{ "bmbt.magic",         E, true,  "block map btree block magic number is wrong" },
	{ "bmbt.crc",           E, true,  "block map btree block CRC does not match its contents" },
	{ "bmbt.uuid",          E, true,  "block map btree block UUID does not match the filesystem" },
	{ "bmbt.lsn",           E, true,  "block map btree block LSN is beyond the log" },
	{ "bmbt.owner",         E, true,  "block map btree block belongs to another inode" },
	{ "bmbt.blkno",         E, true,  "block map btree block says it lives at another address" },
	{ "bmbt.level",         E, true,  "block map btree block level is wrong for its place in the tree" },
	{ "bmbt.numrecs",       E, true,  "block map btree block record count is impossible" },
	{ "bmbt.sibling",       E, true,  "block map btree sibling pointers do not link the blocks of a level in order" },
	{ "bmbt.ptr",           E, true,  "block map btree pointer is outside the filesystem" },
	{ "bmbt.key",           E, true,  "block map btree node key does not match its child" },
	{ "bmbt.order",         E, true,  "block map btree keys are out of order" },
	{ "bmbt.loop",          E, true,  "block map btree block is reached twice (loop or shared subtree)" },
	{ "log.unreadable",     E, false, "log could not be read" },
	{ "log.dirty",          W, false, "log is dirty: mount the filesystem to replay it; later findings may be spurious" },
};

#undef E
#undef W
#undef I

const struct fs_finding_def *fs_finding_table(size_t *count)
{
	*count = sizeof(table) / sizeof(table[0]);
	return table;
}

const struct fs_finding_def *fs_finding_lookup(const char *code)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].code, code))
			return &table[i];
	return NULL;
}

void fs_findings_init(struct fs_findings *fl)
{
	memset(fl, 0, sizeof(*fl));
	pthread_mutex_init(&fl->lock, NULL);
}

void fs_findings_free(struct fs_findings *fl)
{
	free(fl->v);
	pthread_mutex_destroy(&fl->lock);
	memset(fl, 0, sizeof(*fl));
}

static void copy_str(char *dst, size_t size, const char *src)
{
	if (!src) {
		dst[0] = 0;
		return;
	}
	snprintf(dst, size, "%s", src);
}

int fs_report(struct fs_findings *fl, const char *code, int64_t ag, int64_t daddr,
	      int64_t ino, const char *field, const char *expected, const char *found,
	      const char *fmt, ...)
{
	const struct fs_finding_def *def = fs_finding_lookup(code);
	struct fs_finding f;
	int ret = 0;

	if (!def)
		return -EINVAL;
	memset(&f, 0, sizeof(f));
	f.def = def;
	f.ag = ag;
	f.daddr = daddr;
	f.ino = ino;
	copy_str(f.field, sizeof(f.field), field);
	copy_str(f.expected, sizeof(f.expected), expected);
	copy_str(f.found, sizeof(f.found), found);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(f.message, sizeof(f.message), fmt, ap);
		va_end(ap);
	} else {
		copy_str(f.message, sizeof(f.message), def->summary);
	}

	pthread_mutex_lock(&fl->lock);
	fl->by_sev[def->sev]++;
	if (fl->n == fl->cap) {
		size_t ncap = fl->cap ? fl->cap * 2 : 64;
		struct fs_finding *nv = realloc(fl->v, ncap * sizeof(*nv));
		if (!nv) {
			fl->dropped++;
			ret = -ENOMEM;
			goto out;
		}
		fl->v = nv;
		fl->cap = ncap;
	}
	fl->v[fl->n++] = f;
out:
	pthread_mutex_unlock(&fl->lock);
	return ret;
}

const char *fs_fmt_u64(char *buf, uint64_t v)
{
	snprintf(buf, 24, "%" PRIu64, v);
	return buf;
}

const char *fs_fmt_x64(char *buf, uint64_t v)
{
	snprintf(buf, 24, "0x%" PRIx64, v);
	return buf;
}

int fs_findings_move(struct fs_findings *dst, struct fs_findings *src)
{
	int ret = 0;

	if (!src->n && !src->dropped)
		return 0;
	pthread_mutex_lock(&dst->lock);
	if (dst->cap - dst->n < src->n) {
		size_t ncap = dst->cap ? dst->cap : 64;
		struct fs_finding *nv;

		while (ncap - dst->n < src->n)
			ncap *= 2;
		nv = realloc(dst->v, ncap * sizeof(*nv));
		if (nv) {
			dst->v = nv;
			dst->cap = ncap;
		}
	}
	for (size_t i = 0; i < src->n; i++) {
		dst->by_sev[src->v[i].def->sev]++;
		if (dst->n < dst->cap) {
			dst->v[dst->n++] = src->v[i];
		} else {
			dst->dropped++;
			ret = -ENOMEM;
		}
	}
	dst->dropped += src->dropped;
	pthread_mutex_unlock(&dst->lock);
	src->n = 0;
	src->dropped = 0;
	memset(src->by_sev, 0, sizeof(src->by_sev));
	return ret;
}

bool fs_findings_has(const struct fs_findings *fl, const char *code)
{
	for (size_t i = 0; i < fl->n; i++)
		if (!strcmp(fl->v[i].def->code, code))
			return true;
	return false;
}

size_t fs_findings_count(const struct fs_findings *fl, enum fs_severity min_sev)
{
	size_t n = 0;
	for (int s = min_sev; s <= FS_SEV_ERROR; s++)
		n += fl->by_sev[s];
	return n;
}

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int cmp_finding(const void *pa, const void *pb)
{
	const struct fs_finding *a = pa, *b = pb;
	int c;

	/* log findings first: they qualify everything after them */
	c = cmp_i64(strncmp(a->def->code, "log.", 4) != 0, strncmp(b->def->code, "log.", 4) != 0);
	if (!c) c = cmp_i64(a->ag, b->ag);
	if (!c) c = cmp_i64(a->daddr, b->daddr);
	if (!c) c = cmp_i64(a->ino, b->ino);
	if (!c) c = cmp_i64(a->def - table, b->def - table);
	return c;
}

void fs_findings_sort(struct fs_findings *fl)
{
	if (fl->n > 1)
		qsort(fl->v, fl->n, sizeof(fl->v[0]), cmp_finding);
}

const char *fs_severity_name(enum fs_severity s)
{
	switch (s) {
	case FS_SEV_INFO: return "info";
	case FS_SEV_WARNING: return "warning";
	default: return "error";
	}
}

void fs_findings_write_text(const struct fs_findings *fl, FILE *out)
{
	for (size_t i = 0; i < fl->n; i++) {
		const struct fs_finding *f = &fl->v[i];

		fprintf(out, "%s: %s", fs_severity_name(f->def->sev), f->def->code);
		/* "code: AG n inode i daddr d: message", or "code: message" with no place */
		if (f->ag != FS_NONE || f->ino != FS_NONE || f->daddr != FS_NONE)
			fputc(':', out);
		if (f->ag != FS_NONE)
			fprintf(out, " AG %" PRId64, f->ag);
		if (f->ino != FS_NONE)
			fprintf(out, " inode %" PRId64, f->ino);
		if (f->daddr != FS_NONE)
			fprintf(out, " daddr 0x%" PRIx64, f->daddr);
		fprintf(out, ": %s", f->message);
		if (f->field[0])
			fprintf(out, " [%s", f->field);
		if (f->field[0] && (f->expected[0] || f->found[0]))
			fprintf(out, ": expected %s, found %s", f->expected[0] ? f->expected : "?",
				f->found[0] ? f->found : "?");
		if (f->field[0])
			fputc(']', out);
		fputc('\n', out);
	}
	if (fl->dropped)
		fprintf(out, "error: %zu further findings were not kept (out of memory)\n",
			fl->dropped);
}

void fs_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void json_opt_int(FILE *out, const char *key, int64_t v)
{
	fprintf(out, ",\"%s\":", key);
	if (v == FS_NONE)
		fputs("null", out);
	else
		fprintf(out, "%" PRId64, v);
}

static void json_opt_str(FILE *out, const char *key, const char *v)
{
	fprintf(out, ",\"%s\":", key);
	if (!v[0])
		fputs("null", out);
	else
		fs_json_string(out, v);
}

void fs_findings_write_json_array(const struct fs_findings *fl, FILE *out)
{
	fputc('[', out);
	for (size_t i = 0; i < fl->n; i++) {
		const struct fs_finding *f = &fl->v[i];

		fputs(i ? ",{" : "{", out);
		fputs("\"code\":", out);
		fs_json_string(out, f->def->code);
		fprintf(out, ",\"severity\":\"%s\"", fs_severity_name(f->def->sev));
		json_opt_int(out, "ag", f->ag);
		json_opt_int(out, "daddr", f->daddr);
		json_opt_int(out, "ino", f->ino);
		json_opt_str(out, "field", f->field);
		json_opt_str(out, "expected", f->expected);
		json_opt_str(out, "found", f->found);
		json_opt_str(out, "message", f->message);
		fprintf(out, ",\"fixable\":%s}", f->def->fixable ? "true" : "false");
	}
	fputc(']', out);
}
