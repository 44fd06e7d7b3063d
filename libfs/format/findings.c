// SPDX-License-Identifier: GPL-2.0
/*
 * The findings table and the records made from it.  Every problem any xfsx
 * tool can report is one row here (stable code, severity, the fix action
 * repair takes for it, summary);
 * verifiers record instances, and human text and JSON are rendered from the
 * same records so the two never disagree.
 */
#include "libfs/format/findings.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define E FS_SEV_ERROR
#define W FS_SEV_WARNING
#define I FS_SEV_INFO
#define F_NONE   FS_FIX_NONE
#define F_SB     FS_FIX_SB
#define F_AGHDR  FS_FIX_AGHDR
#define F_BTREES FS_FIX_AG_BTREES
#define F_CLEAR  FS_FIX_INODE_CLEAR
#define F_FIELD  FS_FIX_INODE_FIELD
#define F_FORK   FS_FIX_FORK
#define F_ICRC   FS_FIX_INODE_CRC
#define F_LOG    FS_FIX_LOG
#define F_DIR    FS_FIX_DIR
#define F_PAR    FS_FIX_PARENTS
#define F_NLINK  FS_FIX_NLINK
#define F_CONN   FS_FIX_CONNECT
#define F_XATTR  FS_FIX_XATTR
#define F_SYML   FS_FIX_SYMLINK
#define F_UNLNK  FS_FIX_UNLINKED
#define F_QUOTA  FS_FIX_QUOTA
#define F_RT     FS_FIX_RT

static const struct fs_finding_def table[] = {
	/* superblocks */
	{ "sb.unreadable",      E, F_NONE,   "superblock could not be read" },
	{ "sb.magic",           E, F_SB,     "superblock magic number is wrong" },
	{ "sb.crc",             E, F_SB,     "superblock CRC does not match its contents" },
	{ "sb.version",         E, F_NONE,   "superblock version is not a v5 version" },
	{ "sb.feature",         E, F_SB,     "superblock feature flags are invalid or unknown" },
	{ "sb.compat_unknown",  I, F_NONE,   "superblock carries compat feature bits unknown to this build (harmless, kept)" },
	{ "sb.geometry",        E, F_SB,     "superblock geometry field is invalid" },
	{ "sb.log",             E, F_SB,     "superblock log geometry is invalid" },
	{ "sb.rtgeometry",      E, F_SB,     "superblock realtime geometry is invalid" },
	{ "sb.stripe",          E, F_SB,     "superblock stripe geometry is invalid" },
	{ "sb.inodes",          E, F_SB,     "superblock inode geometry is invalid" },
	{ "sb.counter",         E, F_SB,     "superblock counter is impossible" },
	{ "sb.quota",           E, F_SB,     "superblock quota fields are invalid" },
	{ "sb.uuid",            E, F_SB,     "superblock UUID does not match the filesystem" },
	{ "sb.lsn",             E, F_SB,     "superblock LSN is beyond the log head" },
	{ "sb.inprogress",      E, F_SB,     "superblock says mkfs did not finish" },
	{ "sb.needsrepair",     E, F_SB,     "filesystem is marked as needing repair (NEEDSREPAIR)" },
	{ "sb.secondary",       E, F_SB,     "secondary superblock disagrees with the primary" },
	{ "sb.garbage",         E, F_SB,     "bytes past the end of the superblock are not zero" },
	{ "sb.primary_bad",     E, F_SB,     "primary superblock unusable, geometry taken from a secondary" },
	/* AGF */
	{ "agf.unreadable",     E, F_NONE,   "AGF could not be read" },
	{ "agf.magic",          E, F_AGHDR,  "AGF magic number is wrong" },
	{ "agf.crc",            E, F_AGHDR,  "AGF CRC does not match its contents" },
	{ "agf.version",        E, F_AGHDR,  "AGF version is wrong" },
	{ "agf.uuid",           E, F_AGHDR,  "AGF UUID does not match the filesystem" },
	{ "agf.lsn",            E, F_AGHDR,  "AGF LSN is invalid" },
	{ "agf.seqno",          E, F_AGHDR,  "AGF sequence number is not its AG number" },
	{ "agf.length",         E, F_AGHDR,  "AGF length does not match the AG size" },
	{ "agf.freelist",       E, F_BTREES, "AGF free list indexes or count are invalid" },
	{ "agf.freeblks",       E, F_BTREES, "AGF free block counters are impossible" },
	{ "agf.levels",         E, F_BTREES, "AGF btree height is outside what the geometry allows" },
	{ "agf.root",           E, F_BTREES, "AGF btree root is outside the AG or on its headers" },
	{ "agf.btreeblks",      E, F_BTREES, "AGF btree block counter is impossible" },
	/* free space (bno) btree blocks (check phase 2) */
	{ "bnobt.unreadable",    E, F_BTREES, "free space (bno) btree block could not be read" },
	{ "bnobt.magic",         E, F_BTREES, "free space (bno) btree block magic number is wrong" },
	{ "bnobt.crc",           E, F_BTREES, "free space (bno) btree block CRC does not match its contents" },
	{ "bnobt.uuid",          E, F_BTREES, "free space (bno) btree block UUID does not match the filesystem" },
	{ "bnobt.lsn",           E, F_BTREES, "free space (bno) btree block LSN is beyond the log" },
	{ "bnobt.owner",         E, F_BTREES, "free space (bno) btree block belongs to another AG" },
	{ "bnobt.blkno",         E, F_BTREES, "free space (bno) btree block says it lives at another address" },
	{ "bnobt.level",         E, F_BTREES, "free space (bno) btree block level is wrong for its place in the tree" },
	{ "bnobt.numrecs",       E, F_BTREES, "free space (bno) btree block record count is impossible" },
	{ "bnobt.sibling",       E, F_BTREES, "free space (bno) btree sibling pointers do not link the blocks of a level in order" },
	{ "bnobt.ptr",           E, F_BTREES, "free space (bno) btree pointer is outside the AG" },
	{ "bnobt.key",           E, F_BTREES, "free space (bno) btree node key does not match its child" },
	{ "bnobt.order",         E, F_BTREES, "free space (bno) btree keys or records are out of order" },
	{ "bnobt.loop",          E, F_BTREES, "free space (bno) btree block is reached twice (loop or shared subtree)" },
	{ "bnobt.depth",         E, F_BTREES, "free space (bno) btree height is outside what the geometry allows" },
	/* free space (cnt) btree blocks (check phase 2) */
	{ "cntbt.unreadable",    E, F_BTREES, "free space (cnt) btree block could not be read" },
	{ "cntbt.magic",         E, F_BTREES, "free space (cnt) btree block magic number is wrong" },
	{ "cntbt.crc",           E, F_BTREES, "free space (cnt) btree block CRC does not match its contents" },
	{ "cntbt.uuid",          E, F_BTREES, "free space (cnt) btree block UUID does not match the filesystem" },
	{ "cntbt.lsn",           E, F_BTREES, "free space (cnt) btree block LSN is beyond the log" },
	{ "cntbt.owner",         E, F_BTREES, "free space (cnt) btree block belongs to another AG" },
	{ "cntbt.blkno",         E, F_BTREES, "free space (cnt) btree block says it lives at another address" },
	{ "cntbt.level",         E, F_BTREES, "free space (cnt) btree block level is wrong for its place in the tree" },
	{ "cntbt.numrecs",       E, F_BTREES, "free space (cnt) btree block record count is impossible" },
	{ "cntbt.sibling",       E, F_BTREES, "free space (cnt) btree sibling pointers do not link the blocks of a level in order" },
	{ "cntbt.ptr",           E, F_BTREES, "free space (cnt) btree pointer is outside the AG" },
	{ "cntbt.key",           E, F_BTREES, "free space (cnt) btree node key does not match its child" },
	{ "cntbt.order",         E, F_BTREES, "free space (cnt) btree keys or records are out of order" },
	{ "cntbt.loop",          E, F_BTREES, "free space (cnt) btree block is reached twice (loop or shared subtree)" },
	{ "cntbt.depth",         E, F_BTREES, "free space (cnt) btree height is outside what the geometry allows" },
	/* reverse mapping btree blocks (check phase 2) */
	{ "rmapbt.unreadable",   E, F_BTREES, "reverse mapping btree block could not be read" },
	{ "rmapbt.magic",        E, F_BTREES, "reverse mapping btree block magic number is wrong" },
	{ "rmapbt.crc",          E, F_BTREES, "reverse mapping btree block CRC does not match its contents" },
	{ "rmapbt.uuid",         E, F_BTREES, "reverse mapping btree block UUID does not match the filesystem" },
	{ "rmapbt.lsn",          E, F_BTREES, "reverse mapping btree block LSN is beyond the log" },
	{ "rmapbt.owner",        E, F_BTREES, "reverse mapping btree block belongs to another AG" },
	{ "rmapbt.blkno",        E, F_BTREES, "reverse mapping btree block says it lives at another address" },
	{ "rmapbt.level",        E, F_BTREES, "reverse mapping btree block level is wrong for its place in the tree" },
	{ "rmapbt.numrecs",      E, F_BTREES, "reverse mapping btree block record count is impossible" },
	{ "rmapbt.sibling",      E, F_BTREES, "reverse mapping btree sibling pointers do not link the blocks of a level in order" },
	{ "rmapbt.ptr",          E, F_BTREES, "reverse mapping btree pointer is outside the AG" },
	{ "rmapbt.key",          E, F_BTREES, "reverse mapping btree node key does not match its child" },
	{ "rmapbt.order",        E, F_BTREES, "reverse mapping btree keys or records are out of order" },
	{ "rmapbt.loop",         E, F_BTREES, "reverse mapping btree block is reached twice (loop or shared subtree)" },
	{ "rmapbt.depth",        E, F_BTREES, "reverse mapping btree height is outside what the geometry allows" },
	{ "rmapbt.rec",          E, F_BTREES, "reverse mapping btree record is invalid" },
	/* reference count btree blocks (check phase 2) */
	{ "refcbt.unreadable",   E, F_BTREES, "reference count btree block could not be read" },
	{ "refcbt.magic",        E, F_BTREES, "reference count btree block magic number is wrong" },
	{ "refcbt.crc",          E, F_BTREES, "reference count btree block CRC does not match its contents" },
	{ "refcbt.uuid",         E, F_BTREES, "reference count btree block UUID does not match the filesystem" },
	{ "refcbt.lsn",          E, F_BTREES, "reference count btree block LSN is beyond the log" },
	{ "refcbt.owner",        E, F_BTREES, "reference count btree block belongs to another AG" },
	{ "refcbt.blkno",        E, F_BTREES, "reference count btree block says it lives at another address" },
	{ "refcbt.level",        E, F_BTREES, "reference count btree block level is wrong for its place in the tree" },
	{ "refcbt.numrecs",      E, F_BTREES, "reference count btree block record count is impossible" },
	{ "refcbt.sibling",      E, F_BTREES, "reference count btree sibling pointers do not link the blocks of a level in order" },
	{ "refcbt.ptr",          E, F_BTREES, "reference count btree pointer is outside the AG" },
	{ "refcbt.key",          E, F_BTREES, "reference count btree node key does not match its child" },
	{ "refcbt.order",        E, F_BTREES, "reference count btree keys or records are out of order" },
	{ "refcbt.loop",         E, F_BTREES, "reference count btree block is reached twice (loop or shared subtree)" },
	{ "refcbt.depth",        E, F_BTREES, "reference count btree height is outside what the geometry allows" },
	{ "refcbt.rec",          E, F_BTREES, "reference count btree record is invalid" },
	/* free space as a whole (check phase 2) */
	{ "freesp.rec",         E, F_BTREES, "free space record is not a valid extent of its AG" },
	{ "freesp.overlap",     E, F_BTREES, "free space records overlap" },
	{ "freesp.mismatch",    E, F_BTREES, "the bno and cnt btrees do not describe the same free extents" },
	{ "agf.counters",       E, F_BTREES, "AGF counter disagrees with what the btree scan found" },
	{ "sb.counters",        E, F_BTREES, "superblock counter disagrees with what the scan found" },
	{ "agi.counters",       E, F_BTREES, "AGI counter disagrees with what the inode btree scan found" },
	{ "finobt.mismatch",    E, F_BTREES, "the free inode btree does not hold exactly the inode btree records with free inodes" },
	{ "inobt.freemask",     E, F_BTREES, "inode in use on disk is marked free in the inode btree" },
	/* block ownership (the in-core model) */
	{ "block.dup",          E, F_FORK,   "block is claimed by more than one owner" },
	{ "block.leak",         E, F_BTREES, "blocks are neither free nor used by anything (leaked)" },
	{ "rmap.missing",       E, F_BTREES, "blocks in use have no reverse mapping" },
	{ "rmap.extra",         E, F_BTREES, "reverse mapping names an owner that does not use those blocks" },
	{ "rmap.mismatch",      E, F_BTREES, "reverse mapping differs from the observed owner (offset or flags)" },
	{ "refcount.missing",   E, F_BTREES, "shared data blocks have no reference count record" },
	{ "refcount.extra",     E, F_BTREES, "reference count record for blocks that are not shared" },
	{ "refcount.mismatch",  E, F_BTREES, "reference count differs from the number of data mappings" },
	{ "refcount.cow_leftover", W, F_BTREES, "leftover CoW staging extent: no write will remap it (the kernel frees it at mount; xfs_repair frees it)" },
	/* AGI */
	{ "agi.unreadable",     E, F_NONE,   "AGI could not be read" },
	{ "agi.magic",          E, F_AGHDR,  "AGI magic number is wrong" },
	{ "agi.crc",            E, F_AGHDR,  "AGI CRC does not match its contents" },
	{ "agi.version",        E, F_AGHDR,  "AGI version is wrong" },
	{ "agi.uuid",           E, F_AGHDR,  "AGI UUID does not match the filesystem" },
	{ "agi.lsn",            E, F_AGHDR,  "AGI LSN is invalid" },
	{ "agi.seqno",          E, F_AGHDR,  "AGI sequence number is not its AG number" },
	{ "agi.length",         E, F_AGHDR,  "AGI length does not match the AG size" },
	{ "agi.count",          E, F_AGHDR,  "AGI inode counters are impossible" },
	{ "agi.levels",         E, F_BTREES, "AGI btree height is outside what the geometry allows" },
	{ "agi.root",           E, F_BTREES, "AGI btree root is outside the AG or on its headers" },
	{ "agi.newino",         E, F_AGHDR,  "AGI newest inode number cannot exist" },
	{ "agi.dirino",         E, F_AGHDR,  "AGI dirino is not NULL" },
	{ "agi.unlinked",       E, F_UNLNK, "AGI unlinked bucket points at an inode that cannot exist" },
	{ "agi.blocks",         E, F_BTREES, "AGI inode btree block counters are impossible" },
	/* AGFL */
	{ "agfl.unreadable",    E, F_NONE,   "AGFL could not be read" },
	{ "agfl.magic",         E, F_BTREES, "AGFL magic number is wrong" },
	{ "agfl.crc",           E, F_BTREES, "AGFL CRC does not match its contents" },
	{ "agfl.uuid",          E, F_BTREES, "AGFL UUID does not match the filesystem" },
	{ "agfl.lsn",           E, F_BTREES, "AGFL LSN is invalid" },
	{ "agfl.seqno",         E, F_BTREES, "AGFL sequence number is not its AG number" },
	{ "agfl.bno",           E, F_BTREES, "AGFL entry is not a valid block of this AG" },
	/* inode btree blocks and records */
	{ "inobt.unreadable",    E, F_BTREES, "inode btree block could not be read" },
	{ "inobt.magic",         E, F_BTREES, "inode btree block magic number is wrong" },
	{ "inobt.crc",           E, F_BTREES, "inode btree block CRC does not match its contents" },
	{ "inobt.uuid",          E, F_BTREES, "inode btree block UUID does not match the filesystem" },
	{ "inobt.lsn",           E, F_BTREES, "inode btree block LSN is beyond the log" },
	{ "inobt.owner",         E, F_BTREES, "inode btree block belongs to another AG" },
	{ "inobt.blkno",         E, F_BTREES, "inode btree block says it lives at another address" },
	{ "inobt.level",         E, F_BTREES, "inode btree block level is wrong for its place in the tree" },
	{ "inobt.numrecs",       E, F_BTREES, "inode btree block record count is impossible" },
	{ "inobt.sibling",       E, F_BTREES, "inode btree sibling pointers do not link the blocks of a level in order" },
	{ "inobt.ptr",           E, F_BTREES, "inode btree pointer is outside the AG" },
	{ "inobt.key",           E, F_BTREES, "inode btree node key does not match its child" },
	{ "inobt.order",         E, F_BTREES, "inode btree keys or records are out of order" },
	{ "inobt.loop",          E, F_BTREES, "inode btree block is reached twice (loop or shared subtree)" },
	{ "inobt.depth",         E, F_BTREES, "inode btree height is outside what the geometry allows" },
	{ "inobt.lost",          E, F_BTREES, "inode chunks in use are missing from the inode btree" },
	{ "inobt.rec",           E, F_BTREES, "inode btree record is invalid" },
	/* free inode btree blocks and records */
	{ "finobt.unreadable",   E, F_BTREES, "free inode btree block could not be read" },
	{ "finobt.magic",        E, F_BTREES, "free inode btree block magic number is wrong" },
	{ "finobt.crc",          E, F_BTREES, "free inode btree block CRC does not match its contents" },
	{ "finobt.uuid",         E, F_BTREES, "free inode btree block UUID does not match the filesystem" },
	{ "finobt.lsn",          E, F_BTREES, "free inode btree block LSN is beyond the log" },
	{ "finobt.owner",        E, F_BTREES, "free inode btree block belongs to another AG" },
	{ "finobt.blkno",        E, F_BTREES, "free inode btree block says it lives at another address" },
	{ "finobt.level",        E, F_BTREES, "free inode btree block level is wrong for its place in the tree" },
	{ "finobt.numrecs",      E, F_BTREES, "free inode btree block record count is impossible" },
	{ "finobt.sibling",      E, F_BTREES, "free inode btree sibling pointers do not link the blocks of a level in order" },
	{ "finobt.ptr",          E, F_BTREES, "free inode btree pointer is outside the AG" },
	{ "finobt.key",          E, F_BTREES, "free inode btree node key does not match its child" },
	{ "finobt.order",        E, F_BTREES, "free inode btree keys or records are out of order" },
	{ "finobt.loop",         E, F_BTREES, "free inode btree block is reached twice (loop or shared subtree)" },
	{ "finobt.depth",        E, F_BTREES, "free inode btree height is outside what the geometry allows" },
	{ "finobt.rec",          E, F_BTREES, "free inode btree record is invalid" },
	/* inodes */
	{ "inode.unreadable",    E, F_NONE,   "inode chunk could not be read" },
	{ "inode.magic",         E, F_FIELD,  "inode magic number is wrong" },
	{ "inode.crc",           E, F_ICRC,   "inode CRC does not match its contents" },
	{ "inode.uuid",          E, F_CLEAR,  "inode UUID does not match the filesystem" },
	{ "inode.lsn",           E, F_FIELD,  "inode LSN is beyond the log" },
	{ "inode.version",       E, F_FIELD,  "inode version is not 3" },
	{ "inode.ino",           E, F_CLEAR,  "inode number stored in the inode is not its own" },
	{ "inode.free",          E, F_BTREES, "inode allocated in the inode btree is free on disk (mode 0)" },
	{ "inode.mode",          E, F_CLEAR,  "inode file type is unknown" },
	{ "inode.size",          E, F_FIELD,  "inode size is impossible for its type or format" },
	{ "inode.nrext64",       E, F_FIELD,  "inode large extent counter flags or padding are invalid" },
	{ "inode.nblocks",       E, F_FIELD,  "inode block count does not match the blocks its forks map" },
	{ "inode.nextents",      E, F_FIELD,  "inode extent count is impossible for its fork" },
	{ "inode.forkoff",       E, F_FIELD,  "inode attr fork offset is invalid" },
	{ "inode.format",        E, F_CLEAR,  "inode data fork format is invalid for its type" },
	{ "inode.aformat",       E, F_FIELD,  "inode attr fork format is invalid" },
	{ "inode.extsize",       E, F_FIELD,  "inode extent size hint is invalid" },
	{ "inode.cowextsize",    E, F_FIELD,  "inode CoW extent size hint is invalid" },
	{ "inode.flags",         E, F_FIELD,  "inode flags are invalid for its type or the filesystem features" },
	{ "inode.reflink",       E, F_FIELD,  "inode shares data blocks but lacks the reflink flag" },
	{ "inode.onlink",        E, F_FIELD,  "inode's obsolete version 1 link count (di_onlink) is not zero" },
	{ "inode.unlinked",      E, F_FIELD,  "inode unlinked list pointer names no inode" },
	{ "inode.timestamp",     E, F_FIELD,  "inode legacy timestamp nanoseconds not below one second" },
	/* dir/attr DA3 node blocks (libfs/format/da.c) */
	{ "da.unreadable",       E, F_DIR,   "DA node block could not be read" },
	{ "da.magic",            E, F_DIR,   "DA node block magic number is wrong" },
	{ "da.crc",              E, F_DIR,   "DA node block CRC does not match its contents" },
	{ "da.uuid",             E, F_DIR,   "DA node block UUID does not match the filesystem" },
	{ "da.lsn",              E, F_DIR,   "DA node block LSN is beyond the log" },
	{ "da.owner",            E, F_DIR,   "DA node block belongs to another inode" },
	{ "da.blkno",            E, F_DIR,   "DA node block says it lives at another address" },
	{ "da.level",            E, F_DIR,   "DA node level is impossible or wrong for its place in the tree" },
	{ "da.count",            E, F_DIR,   "DA node entry count is zero or does not fit the block" },
	{ "da.order",            E, F_DIR,   "DA node hash values are out of order" },
	{ "da.ptr",              E, F_DIR,   "DA node child pointer is outside the fork's range" },
	{ "da.hash",             E, F_DIR,   "DA node key does not match the highest hash of its child" },
	{ "da.loop",             E, F_DIR,   "DA block is reached twice (loop or shared subtree)" },
	{ "da.sibling",          E, F_DIR,   "DA sibling pointers do not link the blocks of a level in order" },
	/* directories (libfs/format/dir.c, check phase dirs) */
	{ "dir.unreadable",      E, F_DIR,   "directory block could not be read" },
	{ "dir.magic",           E, F_DIR,   "directory block magic number is wrong" },
	{ "dir.crc",             E, F_DIR,   "directory block CRC does not match its contents" },
	{ "dir.uuid",            E, F_DIR,   "directory block UUID does not match the filesystem" },
	{ "dir.lsn",             E, F_DIR,   "directory block LSN is beyond the log" },
	{ "dir.owner",           E, F_DIR,   "directory block belongs to another inode" },
	{ "dir.blkno",           E, F_DIR,   "directory block says it lives at another address" },
	{ "dir.format",          E, F_DIR,   "directory block mapping fits no directory format" },
	{ "dir.size",            E, F_DIR,   "directory size does not match its blocks" },
	{ "dir.sf",              E, F_DIR,   "short form directory header, offsets or size are invalid" },
	{ "dir.namelen",         E, F_DIR,   "directory entry name length is zero or runs past the block" },
	{ "dir.name",            E, F_DIR,   "directory entry name contains '/' or NUL" },
	{ "dir.tag",             E, F_DIR,   "directory entry or free region tag is not its offset" },
	{ "dir.unused",          E, F_DIR,   "directory free region is malformed" },
	{ "dir.bestfree",        E, F_DIR,   "directory data block bestfree table is not its largest free regions" },
	{ "dir.ino",             E, F_DIR,   "directory entry names an inode number that cannot exist" },
	{ "dir.ftype",           E, F_DIR,   "directory entry file type is unknown or not the inode's type" },
	{ "dir.count",           E, F_DIR,   "directory leaf entry count does not fit the block" },
	{ "dir.stale",           E, F_DIR,   "directory leaf stale count is wrong" },
	{ "dir.hash_order",      E, F_DIR,   "directory leaf hash values are out of order" },
	{ "dir.bad_hash",        E, F_DIR,   "directory leaf hash is not the hash of the entry's name" },
	{ "dir.leaf",            E, F_DIR,   "directory leaf entries do not match the data entries" },
	{ "dir.bests",           E, F_DIR,   "directory best free table disagrees with the data blocks" },
	{ "dir.free",            E, F_DIR,   "directory free index block header is wrong" },
	{ "dir.dup_name",        E, F_DIR,   "directory holds the same name more than once" },
	{ "dir.dot",             E, F_DIR,   "directory \".\" entry is missing, misplaced or not the directory" },
	{ "dir.dotdot",          E, F_DIR,   "directory \"..\" entry is missing or misplaced" },
	{ "dir.parent",          E, F_DIR,   "directory \"..\" does not name the directory's parent" },
	{ "dir.entry_free",      E, F_DIR,   "directory entry names an inode that is not allocated" },
	{ "dir.hardlink",        E, F_PAR,   "directory is linked from more than one directory" },
	{ "dir.lost_found",      E, F_DIR,   "the root's lost+found entry does not name a directory" },
	{ "dir.not_dir",         E, F_DIR,   "directory-format data in an inode that is not a directory" },
	{ "inode.nlink",         E, F_NLINK, "inode link count differs from the directory references to it" },
	{ "inode.unreachable",   E, F_CONN,  "inode in use is not reachable from the root directory" },
	/* extended attributes (check phase attrs) */
	{ "attr.magic",          E, F_XATTR, "attr leaf block magic number is wrong" },
	{ "attr.crc",            E, F_XATTR, "attr leaf block CRC does not match its contents" },
	{ "attr.uuid",           E, F_XATTR, "attr leaf block UUID does not match the filesystem" },
	{ "attr.lsn",            E, F_XATTR, "attr leaf block LSN is beyond the log" },
	{ "attr.owner",          E, F_XATTR, "attr leaf block belongs to another inode" },
	{ "attr.blkno",          E, F_XATTR, "attr leaf block says it lives at another address" },
	{ "attr.firstused",      E, F_XATTR, "attr leaf first used byte is wrong" },
	{ "attr.count",          E, F_XATTR, "attr leaf entry count is impossible" },
	{ "attr.nameidx",        E, F_XATTR, "attr leaf entry name offset is outside the name area" },
	{ "attr.entry",          E, F_XATTR, "attr leaf entry runs past the block end" },
	{ "attr.flags",          E, F_XATTR, "attr entry flags are invalid" },
	{ "attr.incomplete",     E, F_XATTR, "attr entry is marked incomplete" },
	{ "attr.name",           E, F_XATTR, "attr entry name is empty or contains a NUL" },
	{ "attr.remote",         E, F_XATTR, "attr entry remote value is invalid or unreadable" },
	{ "attr.overlap",        E, F_XATTR, "attr leaf entries overlap" },
	{ "attr.order",          E, F_XATTR, "attr entries or node keys are out of hash order" },
	{ "attr.hash",           E, F_XATTR, "attr entry hash does not match its name" },
	{ "attr.usedbytes",      E, F_XATTR, "attr leaf used byte count is wrong" },
	{ "attr.freemap",        E, F_XATTR, "attr leaf free map is invalid" },
	{ "attr.sf_size",        E, F_XATTR, "short form attr size is invalid" },
	{ "attr.sf_entry",       E, F_XATTR, "short form attr entry runs past the end" },
	{ "attr.sf_name",        E, F_XATTR, "short form attr name is empty or contains a NUL" },
	{ "attr.sf_flags",       E, F_XATTR, "short form attr flags are invalid" },
	{ "attr.unreadable",     E, F_XATTR, "attr fork block could not be read" },
	{ "attr.tree",           E, F_XATTR, "attr fork block is not what its place in the tree needs" },
	{ "attr.sibling",        E, F_XATTR, "attr leaf sibling pointers do not chain the leaves in order" },
	{ "attr.unreachable",    E, F_XATTR, "attr fork block is mapped but neither in the tree nor a value" },
	/* remote attr value blocks */
	{ "attrrmt.magic",       E, F_XATTR, "remote attr value block magic number is wrong" },
	{ "attrrmt.crc",         E, F_XATTR, "remote attr value block CRC does not match its contents" },
	{ "attrrmt.uuid",        E, F_XATTR, "remote attr value block UUID does not match the filesystem" },
	{ "attrrmt.lsn",         E, F_XATTR, "remote attr value block LSN is beyond the log" },
	{ "attrrmt.owner",       E, F_XATTR, "remote attr value block belongs to another inode" },
	{ "attrrmt.blkno",       E, F_XATTR, "remote attr value block says it lives at another address" },
	{ "attrrmt.offset",      E, F_XATTR, "remote attr value block offset is wrong" },
	{ "attrrmt.bytes",       E, F_XATTR, "remote attr value block byte count is wrong" },
	/* symbolic links */
	{ "symlink.magic",       E, F_SYML,  "remote symlink block magic number is wrong" },
	{ "symlink.crc",         E, F_SYML,  "remote symlink block CRC does not match its contents" },
	{ "symlink.uuid",        E, F_SYML,  "remote symlink block UUID does not match the filesystem" },
	{ "symlink.lsn",         E, F_SYML,  "remote symlink block LSN is beyond the log" },
	{ "symlink.owner",       E, F_SYML,  "remote symlink block belongs to another inode" },
	{ "symlink.blkno",       E, F_SYML,  "remote symlink block says it lives at another address" },
	{ "symlink.offset",      E, F_SYML,  "remote symlink block offset is wrong" },
	{ "symlink.bytes",       E, F_SYML,  "remote symlink block byte count is wrong" },
	{ "symlink.size",        E, F_SYML,  "symlink target length is impossible or disagrees with its blocks" },
	{ "symlink.target",      E, F_SYML,  "symlink target contains a NUL byte" },
	{ "symlink.unreadable",  E, F_SYML,  "remote symlink block could not be read" },
	/* device files, fifos, sockets */
	{ "special.size",        E, F_CLEAR,  "special file has a nonzero size" },
	{ "special.extents",     E, F_CLEAR,  "special file has data blocks or extents" },
	/* quota and realtime metadata inodes */
	{ "dquot.magic",         E, F_QUOTA, "dquot magic number is wrong" },
	{ "dquot.crc",           E, F_QUOTA, "dquot CRC does not match its contents" },
	{ "dquot.uuid",          E, F_QUOTA, "dquot UUID does not match the filesystem" },
	{ "dquot.lsn",           E, F_QUOTA, "dquot LSN is beyond the log" },
	{ "dquot.version",       E, F_QUOTA, "dquot version is wrong" },
	{ "dquot.type",          E, F_QUOTA, "dquot type is invalid" },
	{ "dquot.id",            E, F_QUOTA, "dquot id does not match its place in the quota file" },
	{ "dquot.timer",         E, F_QUOTA, "dquot over its soft limit has no grace timer" },
	{ "dquot.unreadable",    E, F_QUOTA, "quota file block could not be read" },
	{ "quota.inode",         E, F_QUOTA, "quota inode is not a usable regular file" },
	{ "rt.inode",            E, F_RT,    "realtime bitmap or summary inode is not what the superblock says" },
	{ "rt.bitmap",           E, F_RT,    "realtime bitmap block disagrees with the realtime extents the files map" },
	{ "rt.summary",          E, F_RT,    "realtime summary block disagrees with the realtime bitmap" },
	{ "rt.frextents",        E, F_RT,    "superblock free realtime extent count disagrees with the realtime bitmap" },
	/* unlinked inode lists (AGI buckets) */
	{ "unlinked.free",       E, F_UNLNK, "inode on an unlinked list is not allocated" },
	{ "unlinked.nlink",      E, F_UNLNK, "inode on an unlinked list still has links" },
	{ "unlinked.bucket",     E, F_UNLNK, "inode is on the wrong unlinked bucket" },
	{ "unlinked.loop",       E, F_UNLNK, "unlinked list loops or an inode is on two lists" },
	{ "unlinked.next",       E, F_UNLNK, "unlinked list pointer names no allocated inode" },
	{ "unlinked.linked",     E, F_UNLNK, "inode with links has an unlinked list pointer" },
	{ "unlinked.pending",    E, F_UNLNK, "AGI unlinked lists hold inodes a clean log leaves unfreed" },
	{ "unlinked.orphan",     E, F_CONN,  "allocated inode with no links is on no unlinked list" },
	/* log */
	/* inode fork block maps (libfs/format/bmap.c; check phase forks) */
	{ "bmap.blockcount",    E, F_FORK,   "fork extent has no blocks" },
	{ "bmap.offset",        E, F_FORK,   "fork extent ends past the largest file offset" },
	{ "bmap.startblock",    E, F_FORK,   "fork extent starts outside the filesystem or on AG headers" },
	{ "bmap.ag_end",        E, F_FORK,   "fork extent runs past the end of its AG" },
	{ "bmap.unwritten",     E, F_FORK,   "unwritten extent outside a regular file's data fork" },
	{ "bmap.order",         E, F_FORK,   "fork extents overlap or are out of offset order" },
	{ "bmap.count",         E, F_FORK,   "fork extent count differs from the inode's counter" },
	/* block map btree blocks (long format, rooted in an inode fork) */
	{ "bmbt.root",          E, F_FORK,   "block map btree root in the inode is invalid" },
	{ "bmbt.unreadable",    E, F_FORK,   "block map btree block could not be read" },
	{ "bmbt.magic",         E, F_FORK,   "block map btree block magic number is wrong" },
	{ "bmbt.crc",           E, F_FORK,   "block map btree block CRC does not match its contents" },
	{ "bmbt.uuid",          E, F_FORK,   "block map btree block UUID does not match the filesystem" },
	{ "bmbt.lsn",           E, F_FORK,   "block map btree block LSN is beyond the log" },
	{ "bmbt.owner",         E, F_FORK,   "block map btree block belongs to another inode" },
	{ "bmbt.blkno",         E, F_FORK,   "block map btree block says it lives at another address" },
	{ "bmbt.level",         E, F_FORK,   "block map btree block level is wrong for its place in the tree" },
	{ "bmbt.numrecs",       E, F_FORK,   "block map btree block record count is impossible" },
	{ "bmbt.sibling",       E, F_FORK,   "block map btree sibling pointers do not link the blocks of a level in order" },
	{ "bmbt.ptr",           E, F_FORK,   "block map btree pointer is outside the filesystem" },
	{ "bmbt.key",           E, F_FORK,   "block map btree node key does not match its child" },
	{ "bmbt.order",         E, F_FORK,   "block map btree keys are out of order" },
	{ "bmbt.loop",          E, F_FORK,   "block map btree block is reached twice (loop or shared subtree)" },
	{ "log.unreadable",     E, F_LOG,    "log could not be read" },
	{ "log.dirty",          W, F_LOG,    "log is dirty: mount the filesystem to replay it; later findings may be spurious" },
	{ "log.attri",          E, F_LOG,    "an unfinished xattr intent in the log cannot be completed: the kernel's recovery stops there and the mount fails" },
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

static int vreport(struct fs_findings *fl, int64_t cause_ino, const char *code, int64_t ag,
		   int64_t daddr, int64_t ino, const char *field, const char *expected,
		   const char *found, const char *fmt, va_list ap)
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
	f.cause_ino = cause_ino == ino ? FS_NONE : cause_ino;
	copy_str(f.field, sizeof(f.field), field);
	copy_str(f.expected, sizeof(f.expected), expected);
	copy_str(f.found, sizeof(f.found), found);
	if (fmt)
		vsnprintf(f.message, sizeof(f.message), fmt, ap);
	else
		copy_str(f.message, sizeof(f.message), def->summary);

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

int fs_report(struct fs_findings *fl, const char *code, int64_t ag, int64_t daddr,
	      int64_t ino, const char *field, const char *expected, const char *found,
	      const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vreport(fl, FS_NONE, code, ag, daddr, ino, field, expected, found, fmt, ap);
	va_end(ap);
	return ret;
}

int fs_report_caused(struct fs_findings *fl, int64_t cause_ino, const char *code, int64_t ag,
		     int64_t daddr, int64_t ino, const char *field, const char *expected,
		     const char *found, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vreport(fl, cause_ino, code, ag, daddr, ino, field, expected, found, fmt, ap);
	va_end(ap);
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

size_t fs_findings_drop(struct fs_findings *fl, bool (*drop)(void *priv, const struct fs_finding *f),
			void *priv)
{
	size_t w = 0, n = 0;

	pthread_mutex_lock(&fl->lock);
	for (size_t i = 0; i < fl->n; i++) {
		if (drop(priv, &fl->v[i])) {
			fl->by_sev[fl->v[i].def->sev]--;
			n++;
			continue;
		}
		fl->v[w++] = fl->v[i];
	}
	fl->n = w;
	pthread_mutex_unlock(&fl->lock);
	return n;
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

/* (inode, index) of the first finding of each inode that has no cause of its own */
struct ino_first {
	int64_t ino;
	size_t i;
};

static int cmp_ino_first(const void *pa, const void *pb)
{
	const struct ino_first *a = pa, *b = pb;

	return a->ino != b->ino ? cmp_i64(a->ino, b->ino) : (a->i > b->i) - (a->i < b->i);
}

/*
 * anchor[i]: the index of the finding finding i is grouped under (the
 * first causeless finding about its cause_ino), or SIZE_MAX.  NULL when
 * nothing is grouped (or without memory: then nothing is, which is safe).
 */
static size_t *group_anchors(const struct fs_findings *fl)
{
	struct ino_first *idx = NULL;
	size_t *anchor = NULL, n = 0;
	bool any = false;

	for (size_t i = 0; i < fl->n && !any; i++)
		any = fl->v[i].cause_ino != FS_NONE;
	if (!any)
		return NULL;
	idx = malloc(fl->n * sizeof(*idx));
	anchor = malloc(fl->n * sizeof(*anchor));
	if (!idx || !anchor) {
		free(idx);
		free(anchor);
		return NULL;
	}
	for (size_t i = 0; i < fl->n; i++)
		if (fl->v[i].cause_ino == FS_NONE && fl->v[i].ino != FS_NONE)
			idx[n++] = (struct ino_first){ fl->v[i].ino, i };
	qsort(idx, n, sizeof(*idx), cmp_ino_first);
	for (size_t i = 0; i < fl->n; i++) {
		size_t lo = 0, hi = n;
		int64_t want = fl->v[i].cause_ino;

		anchor[i] = SIZE_MAX;
		if (want == FS_NONE)
			continue;
		while (lo < hi) {	/* the first entry for want: its lowest index */
			size_t mid = lo + (hi - lo) / 2;

			if (idx[mid].ino < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && idx[lo].ino == want)
			anchor[i] = idx[lo].i;
	}
	free(idx);
	return anchor;
}

static void write_one_text(const struct fs_finding *f, FILE *out)
{
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

struct group_sort {
	const size_t *anchor;
	const struct fs_findings *fl;
};

/* grouped findings in print order: by anchor, then code, then position */
static int cmp_grouped(const void *pa, const void *pb, void *arg)
{
	const struct group_sort *gs = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = cmp_i64((int64_t)gs->anchor[a], (int64_t)gs->anchor[b]);

	if (!c)
		c = cmp_i64(gs->fl->v[a].def - table, gs->fl->v[b].def - table);
	return c ? c : cmp_i64((int64_t)a, (int64_t)b);
}

/*
 * The findings grouped under one cause, g[0..n) (all with the same anchor,
 * sorted by code): per code, how many and the first few inodes.
 */
static void write_group_text(const struct fs_findings *fl, const size_t *g, size_t n, FILE *out)
{
	fprintf(out, "  ... %zu more %s follow%s from it:", n, n == 1 ? "finding" : "findings",
		n == 1 ? "s" : "");
	for (size_t k = 0; k < n;) {
		const struct fs_finding_def *def = fl->v[g[k]].def;
		size_t end = k, shown = 0;

		while (end < n && fl->v[g[end]].def == def)
			end++;
		fprintf(out, "%s %zu %s (", k ? ";" : "", end - k, def->code);
		for (size_t j = k; j < end && shown < 5; j++, shown++) {
			const struct fs_finding *f = &fl->v[g[j]];

			if (f->ino != FS_NONE)
				fprintf(out, "%s%" PRId64, shown ? ", " : end - k > 1 ? "inodes " :
					"inode ", f->ino);
			else
				fprintf(out, "%s%s", shown ? ", " : "", f->message);
		}
		fprintf(out, "%s)", end - k > shown ? ", ..." : "");
		k = end;
	}
	fputc('\n', out);
}

void fs_findings_write_text(const struct fs_findings *fl, FILE *out)
{
	size_t *anchor = group_anchors(fl);
	size_t *g = NULL, ng = 0, k = 0;

	if (anchor) {
		g = malloc(fl->n * sizeof(*g));
		if (!g) {
			free(anchor);
			anchor = NULL;	/* without memory, every finding on its own line */
		}
	}
	if (anchor) {
		for (size_t i = 0; i < fl->n; i++)
			if (anchor[i] != SIZE_MAX)
				g[ng++] = i;
		struct group_sort gs = { anchor, fl };

		qsort_r(g, ng, sizeof(*g), cmp_grouped, &gs);
	}
	for (size_t i = 0; i < fl->n; i++) {
		size_t end;

		if (anchor && anchor[i] != SIZE_MAX)
			continue;	/* printed as part of its cause's group */
		write_one_text(&fl->v[i], out);
		/* anchors come in index order, as the groups are sorted */
		while (k < ng && anchor[g[k]] < i)
			k++;
		for (end = k; end < ng && anchor[g[end]] == i; end++)
			;
		if (end > k)
			write_group_text(fl, g + k, end - k, out);
		k = end;
	}
	free(g);
	free(anchor);
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

const char *fs_fix_name(enum fs_fix fix)
{
	static const char *const names[FS_FIX_NR] = {
		[FS_FIX_NONE] = "none", [FS_FIX_SB] = "sb", [FS_FIX_AGHDR] = "aghdr",
		[FS_FIX_AG_BTREES] = "ag_btrees", [FS_FIX_INODE_CLEAR] = "inode_clear",
		[FS_FIX_INODE_FIELD] = "inode_field", [FS_FIX_INODE_CRC] = "inode_crc",
		[FS_FIX_FORK] = "fork",
		[FS_FIX_DIR] = "dir", [FS_FIX_PARENTS] = "parents", [FS_FIX_NLINK] = "nlink",
		[FS_FIX_CONNECT] = "lost_found", [FS_FIX_XATTR] = "xattr",
		[FS_FIX_SYMLINK] = "symlink", [FS_FIX_UNLINKED] = "unlinked",
		[FS_FIX_QUOTA] = "quota", [FS_FIX_RT] = "rt", [FS_FIX_LOG] = "log",
	};

	return (unsigned)fix < FS_FIX_NR ? names[fix] : "unknown";
}

void fs_findings_write_json_array(const struct fs_findings *fl, FILE *out)
{
	fs_findings_write_json_array_ex(fl, out, NULL, NULL);
}

void fs_findings_write_json_array_ex(const struct fs_findings *fl, FILE *out,
				     void (*extra)(void *priv, size_t i, FILE *out), void *priv)
{
	size_t *anchor = group_anchors(fl);

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
		fprintf(out, ",\"fixable\":%s,\"fix\":\"%s\"", f->def->fix != FS_FIX_NONE ? "true" : "false",
			fs_fix_name(f->def->fix));
		/* the cause: the inode, and the code of its own finding when there is one */
		if (f->cause_ino == FS_NONE) {
			fputs(",\"cause\":null", out);
		} else {
			fprintf(out, ",\"cause\":{\"ino\":%" PRId64 ",\"code\":", f->cause_ino);
			if (anchor && anchor[i] != SIZE_MAX)
				fs_json_string(out, fl->v[anchor[i]].def->code);
			else
				fputs("null", out);
			fputc('}', out);
		}
		if (extra)
			extra(priv, i, out);
		fputc('}', out);
	}
	fputc(']', out);
	free(anchor);
}
