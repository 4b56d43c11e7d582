// The icons manifests may name (`nav.icon`, `action.icon`), registered by name so the bundle only
// carries these.
import {
  ApiOutlined,
  AppstoreOutlined,
  DashboardOutlined,
  DeleteOutlined,
  EditOutlined,
  EllipsisOutlined,
  InboxOutlined,
  KeyOutlined,
  LockOutlined,
  PauseCircleOutlined,
  PlayCircleOutlined,
  PlusOutlined,
  ReloadOutlined,
  SettingOutlined,
  TagOutlined,
  TeamOutlined,
  UserOutlined,
  UserSwitchOutlined,
} from "@ant-design/icons";
import { registerIcons } from "../renderer/index.ts";

registerIcons({
  api: ApiOutlined,
  apps: AppstoreOutlined,
  dashboard: DashboardOutlined,
  delete: DeleteOutlined,
  edit: EditOutlined,
  more: EllipsisOutlined,
  archive: InboxOutlined,
  key: KeyOutlined,
  lock: LockOutlined,
  pause: PauseCircleOutlined,
  play: PlayCircleOutlined,
  plus: PlusOutlined,
  reload: ReloadOutlined,
  settings: SettingOutlined,
  tag: TagOutlined,
  team: TeamOutlined,
  user: UserOutlined,
  role: UserSwitchOutlined,
});
