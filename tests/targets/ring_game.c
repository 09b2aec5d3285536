/* A second foreign "game" for the memory finder's tests: the position lives in many copies of one struct.
 *
 * The player is an Entity (320 bytes). The game keeps its own Entity inside a Client object (a header
 * of constants before it, a footer after it), and copies of it everywhere else, as engines with a
 * snapshot ring do:
 *   a ring of RING Entities, one overwritten per tick with the state before the tick (they lag);
 *   a shadow Entity on the heap, copied before each tick (it lags one tick);
 *   g_view, an Entity in the executable's .bss, copied before each tick (a static copy, one tick late);
 *   g_player, a static pointer to the game's own Entity.
 * Around any one copy, 96 bytes either way hold the same bytes as around every other copy: only a
 * window reaching the Client's header or footer is unique.
 *
 *   --pooled        the game's own Entity is one slot, chosen at random, of the same pool as the ring:
 *                   no window around it is unique at the same place in every process.
 *   --launch K      the K-th launch of a run: from the third on, the K - 2 words of the Client's header and
 *                   footer nearest the Entity differ from every earlier launch's (a build number, a session
 *                   id): a pattern that reaches the nearest words still alike fails on the next launch.
 *   --scene-nodes   also a pool of NODES SceneNodes, as a renderer keeps: one, at a random slot, copies the
 *                   position after each tick (it never lags); the others hold (0, 0.05, 0.05), and every node's
 *                   bytes but its id are alike (scale 1.0, flags, a kind pointer): a pattern around the player's
 *                   node tells it from the others by one byte of its id.
 *   --twin-node     with --scene-nodes: one other node has the player's node's id too, as a later launch may
 *                   have (another object of the kind): a pattern from the scene node matches it as well.
 *   --first-person  the camera is the player: x and y on the ground, z up, the feet at z = 64, an eye
 *                   copy 56 units above the feet, walking 340 units a second; turning turns the player.
 *                   Otherwise: x and z on the ground, y up, 5 units a second, as foreign_game.c.
 *
 * Commands (one a line): hold LX LY RX RY TICKS (30 Hz; "ok TICK"), turn DEG (turn right; "ok TICK"),
 * reset (back to the spawn point, facing the start; "ok TICK"), where ("ok X Y Z": for the tests'
 * assertions only), quit. At start it prints one JSON line of addresses, for assertions only.
 * Yaw 0 looks along the second horizontal axis; turning right lowers it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 64
#define DT (1.0f / 30.0f)
#define TURN_DEG 90.0f
#define EYE 56.0f

typedef struct Entity {
    uint32_t type_tag;        /* constant in every copy */
    uint32_t kind;
    char model[24];
    uint32_t stats[16];
    float health, armour;
    float pos[3];             /* the truth in the game's own Entity (offset 104) */
    float vel[3];
    float yaw;
    uint32_t moving;
    uint32_t tail[24];
    char team[16];
    uint32_t serial;          /* the tick the state is from */
    uint32_t spare[13];
} Entity;

typedef struct Client {
    char magic[16];
    uint32_t build[6];
    Entity self;
    uint32_t footer[8];
    char server[16];
} Client;

#define NODES 64
#define PLAYER_NODE_ID 0x0511
typedef struct SceneNode {
    const void *kind;         /* a static address: what kind of node (pointer-like, never literal) */
    float pos[3];             /* the player's node: the position, copied after each tick */
    float rot[3];
    float scale[3];           /* 1.0 in every node */
    uint16_t id;              /* PLAYER_NODE_ID in the player's node, the next value in the others */
    uint8_t visible, culled;
    struct SceneNode *parent;
    uint32_t spare[2];
} SceneNode;

typedef struct Camera { float eye[3]; float yaw; float pitch; float fov; } Camera;

Entity g_view;               /* a static copy, in .bss */
Entity *g_player;            /* a static pointer to the game's own Entity */
static int first_person;

static void *junk(size_t most) { void *p = malloc(16 + (size_t)(rand() % (int)most)); memset(p, 0x5C, 16); return p; }

static void fill(Entity *e) {
    e->type_tag = 0x59544E45;  /* "ENTY" */
    e->kind = 0x0B0A0907;
    strcpy(e->model, first_person ? "models/fp/arms.iqm" : "models/hero/body.iqm");
    for (int i = 0; i < 16; i++) e->stats[i] = 0x9E3779B9u * (uint32_t)(i + 3) | 0x01010101u;
    for (int i = 0; i < 24; i++) e->tail[i] = 0x85EBCA6Bu * (uint32_t)(i + 5) | 0x01010101u;
    e->health = 87.5f; e->armour = 33.25f;
    strcpy(e->team, "blue-team-seven");
    for (int i = 0; i < 13; i++) e->spare[i] = 0xC2B2AE35u * (uint32_t)(i + 7) | 0x01010101u;
}

static void spawn(Entity *e, float *cam_yaw) {
    if (first_person) { e->pos[0] = 1234.0f; e->pos[1] = -560.0f; e->pos[2] = 64.0f; }
    else { e->pos[0] = 12.5f; e->pos[1] = 1.5f; e->pos[2] = -40.25f; }
    memset(e->vel, 0, sizeof e->vel);
    *cam_yaw = 30.0f;
    e->yaw = *cam_yaw;
    e->moving = 0;
}

int main(int argc, char **argv) {
    int pooled = 0, launch = 1, scene_nodes = 0, twin_node = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pooled")) pooled = 1;
        if (!strcmp(argv[i], "--scene-nodes")) scene_nodes = 1;
        if (!strcmp(argv[i], "--twin-node")) twin_node = 1;
        if (!strcmp(argv[i], "--launch") && i + 1 < argc) launch = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--first-person")) first_person = 1;
    }
    srand((unsigned)(time(NULL) ^ (getpid() << 8)));
    for (int i = 0; i < 40 + rand() % 40; i++) junk(4096);  /* the heap layout differs between runs */

    Entity *pool = calloc(RING + 1, sizeof(Entity));
    junk(2048);
    Client *client = calloc(1, sizeof(Client));
    memcpy(client->magic, "CLIENTSTATE-0042", 16);
    for (int i = 0; i < 6; i++) client->build[i] = 0x27D4EB2Fu * (uint32_t)(i + 11) | 0x01010101u;
    for (int i = 0; i < 8; i++) client->footer[i] = 0x165667B1u * (uint32_t)(i + 13) | 0x01010101u;
    memcpy(client->server, "play.example.net", 16);
    for (int i = 0; i < launch - 2 && i < 6; i++) {  /* build[5] and footer[0] are the nearest the Entity */
        client->build[5 - i] ^= 0xA5A5A5A5u + (uint32_t)launch;
        client->footer[i] ^= 0x5A5A5A5Au + (uint32_t)launch;
    }
    junk(2048);
    Entity *shadow = calloc(1, sizeof(Entity));
    junk(512);
    Camera *camera = calloc(1, sizeof(Camera));
    int own_slot = pooled ? rand() % (RING + 1) : -1;
    Entity *own = pooled ? &pool[own_slot] : &client->self;
    Entity *ring[RING];
    for (int i = 0, k = 0; i <= RING; i++)
        if (i != own_slot && k < RING) ring[k++] = &pool[i];
    g_player = own;

    /* Scene nodes: the player's away from the pool's ends, so that every node within the signature builder's
     * widest reach (1024 bytes) of it is another node. */
    SceneNode *nodes = calloc(NODES, sizeof(SceneNode)), *node = NULL;
    junk(1024);
    if (scene_nodes) {
        int slot = 20 + rand() % (NODES - 40);
        for (int i = 0; i < NODES; i++) {
            SceneNode *n = &nodes[i];
            n->kind = &g_view;
            n->pos[0] = 0.0f; n->pos[1] = 0.05f; n->pos[2] = 0.05f;
            n->scale[0] = n->scale[1] = n->scale[2] = 1.0f;
            n->id = PLAYER_NODE_ID + 1;
            n->visible = 1;
            n->parent = &nodes[0];
        }
        node = &nodes[slot];
        node->id = PLAYER_NODE_ID;
        if (twin_node) nodes[slot + 7].id = PLAYER_NODE_ID;
    }

    float cam_yaw;
    fill(own);
    spawn(own, &cam_yaw);
    if (node) memcpy(node->pos, own->pos, sizeof node->pos);
    for (int i = 0; i < RING; i++) *ring[i] = *own;
    *shadow = *own;
    g_view = *own;
    camera->fov = first_person ? 103.0f : 70.0f;
    uint64_t tick = 0;

    printf("{\"pid\": %d, \"pos\": %lu, \"static\": %lu, \"shadow\": %lu, \"eye\": %lu, \"ring\": %lu, "
           "\"g_player\": %lu, \"entity_size\": %lu, \"pos_offset\": %lu, \"node\": %lu}\n",
           (int)getpid(), (unsigned long)own->pos, (unsigned long)g_view.pos, (unsigned long)shadow->pos,
           (unsigned long)camera->eye, (unsigned long)ring[0]->pos, (unsigned long)&g_player,
           (unsigned long)sizeof(Entity), (unsigned long)((char *)own->pos - (char *)own),
           (unsigned long)(node ? node->pos : 0));
    fflush(stdout);

    float speed = first_person ? 340.0f : 5.0f;
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        float lx, ly, rx, ry, degrees;
        int ticks;
        if (sscanf(line, "hold %f %f %f %f %d", &lx, &ly, &rx, &ry, &ticks) == 5) {
            for (int t = 0; t < ticks; t++, tick++) {
                /* Copies taken before the tick: the ring, the shadow and the static view all lag. */
                *ring[tick % RING] = *own;
                *shadow = *own;
                g_view = *own;
                cam_yaw -= rx * TURN_DEG * DT;
                float magnitude = fminf(1.0f, sqrtf(lx * lx + ly * ly));
                int moving = magnitude > 0.1f;
                float dir = (cam_yaw + atan2f(-lx, ly) * 180.0f / (float)M_PI) * (float)M_PI / 180.0f;
                float step = moving ? speed * DT * magnitude : 0.0f;
                if (first_person) {  /* x, y on the ground: forward at yaw 0 is +y */
                    own->vel[0] = moving ? -sinf(dir) * speed : 0.0f;
                    own->vel[1] = moving ? cosf(dir) * speed : 0.0f;
                    own->pos[0] -= sinf(dir) * step;
                    own->pos[1] += cosf(dir) * step;
                    own->yaw = cam_yaw;  /* the camera is the player */
                } else {              /* x, z on the ground: forward at yaw 0 is +z */
                    own->vel[0] = moving ? sinf(dir) * speed : 0.0f;
                    own->vel[2] = moving ? cosf(dir) * speed : 0.0f;
                    own->pos[0] += sinf(dir) * step;
                    own->pos[2] += cosf(dir) * step;
                    if (moving) own->yaw = dir * 180.0f / (float)M_PI;
                }
                own->moving = (uint32_t)moving;
                own->serial = (uint32_t)tick;
                camera->yaw = cam_yaw;
                if (node) { memcpy(node->pos, own->pos, sizeof node->pos); node->rot[1] = cam_yaw; }
                camera->eye[0] = own->pos[0];
                camera->eye[1] = own->pos[1] + (first_person ? 0.0f : 2.0f);
                camera->eye[2] = own->pos[2] + (first_person ? EYE : 0.0f);
            }
            printf("ok %lu\n", (unsigned long)tick);
        } else if (sscanf(line, "turn %f", &degrees) == 1) {
            cam_yaw -= degrees;
            if (first_person) own->yaw = cam_yaw;
            camera->yaw = cam_yaw;
            printf("ok %lu\n", (unsigned long)tick);
        } else if (!strncmp(line, "reset", 5)) {
            spawn(own, &cam_yaw);
            if (node) memcpy(node->pos, own->pos, sizeof node->pos);
            printf("ok %lu\n", (unsigned long)tick);
        } else if (!strncmp(line, "where", 5)) {
            printf("ok %.4f %.4f %.4f\n", own->pos[0], own->pos[1], own->pos[2]);
        } else if (!strncmp(line, "quit", 4)) {
            break;
        } else {
            printf("error unknown command\n");
        }
        fflush(stdout);
    }
    return 0;
}
